// qwenchat_gui_seed DB: writes a demo conversation into a store, so the end-to-end test's screenshots show
// what the chat view renders (Markdown with a table, lists, code with its Copy button, thinking, two
// branches of a reply, a stats line). The live reply of the random test model is word salad; this one
// is written by hand. Built through the chat-state operations, as the app builds its trees.
#include <cstdio>

#include "chat/chat_state.h"
#include "store/store.h"

namespace {

constexpr const char* kQuestion = "How does the hybrid model decode a token? Keep it short, with a table.";

constexpr const char* kThinking =
    "The user wants a short overview. Mention the two layer kinds, the per-token cost, and a tiny code "
    "sample for the recurrence.";

constexpr const char* kAnswer = R"(## Decoding one token

Each token passes through **48 layers**: three *Gated DeltaNet* layers for every full-attention layer.

| Layer kind | State per token | Cost at long context |
|------------|-----------------|----------------------|
| Gated DeltaNet | fixed `128 x 128` matrix per head | constant |
| Attention | grows with the KV cache | linear |

1. Embed the token.
2. Run the layers; the recurrent ones update their state in place:
   - decay the state by `g`
   - write the new key/value pair
3. Sample from the logits (see the ~~old~~ new sampler).

```cpp
// delta rule, one head
S = g * S + beta * (v - S * k) * k.T;
o = S * q;
```

> Speculative decoding with the MTP block drafts a token that the main model checks in the same pass.

More in [QWEN35.md](https://example.org/qwen35).)";

constexpr const char* kAnswerV1 = "A first, shorter answer: embed, run 48 layers, sample.";

qc::Status seed(const std::string& db) {
  QC_ASSIGN(qc::store::Store store, qc::store::Store::open(db));
  qc::store::NewConversation nc;
  nc.title = "Hybrid decoding (demo)";
  nc.system_prompt = "You are a concise assistant.";
  nc.model_path = "demo";
  nc.now_ms = qc::chat::now_ms() - 60000;
  QC_ASSIGN(qc::chat::Conversation c, store.create_conversation(nc));
  qc::chat::ChatTree t;
  t.conversation = c;
  const int64_t now = nc.now_ms;
  QC_ASSIGN(auto user, qc::chat::append_user(t, {.content = kQuestion, .parent_id = -1, .now_ms = now}));
  QC_TRY(store.apply(t, user));
  qc::chat::MessageId first_reply = 0;
  auto reply = [&](const char* content, const char* thinking) -> qc::Status {
    qc::chat::TreeChange r;
    if (first_reply == 0) {
      QC_ASSIGN(r, qc::chat::start_reply(t, {.parent_id = user.message, .model = "demo", .now_ms = now}));
      first_reply = r.message;
    } else {
      QC_ASSIGN(r, qc::chat::regenerate(t, first_reply, {.model = "demo", .now_ms = now}));
    }
    QC_TRY(store.apply(t, r));
    qc::chat::ReplyEnd end;
    end.replace_text = true;
    end.content = content;
    end.thinking = thinking;
    end.now_ms = now + 1000;
    end.stats = {{"prompt_tokens", 38},
                 {"generated_tokens", 212},
                 {"tok_per_s", 187.4},
                 {"prefill_tok_per_s", 2150.0},
                 {"ttft_ms", 21.0},
                 {"mtp_draft_len", 2},
                 {"mtp_acceptance", 0.74},
                 {"mtp_acceptance_per_position", {0.81, 0.62}},
                 {"backend", "cuda"},
                 {"kernel", "tile"},
                 {"stop_reason", "stop_token"}};
    QC_ASSIGN(auto f, qc::chat::finish_reply(t, r.message, end));
    return store.apply(t, f);
  };
  QC_TRY(reply(kAnswerV1, ""));
  QC_TRY(reply(kAnswer, kThinking));
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: qwenchat_gui_seed DB\n");
    return 2;
  }
  const qc::Status s = seed(argv[1]);
  if (!s.ok()) {
    std::fprintf(stderr, "qwenchat_gui_seed: %s\n", s.error().describe().c_str());
    return 1;
  }
  return 0;
}
