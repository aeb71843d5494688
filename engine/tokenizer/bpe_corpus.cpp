// The default training text for generated vocabularies: original prose about how a local chat app works,
// some arithmetic and a little code, so the merges cover words, digits, punctuation runs and indentation.
#include "tokenizer/bpe_trainer.h"

namespace qc {

std::string_view builtin_training_corpus() {
  return R"corpus(How a chat application works

A chat application on your own computer has three parts that talk to each other. The window shows the
conversation and a box where you type. The engine holds the model in the memory of the graphics card and
turns text into numbers and numbers back into text. Between the two sits a queue: the window puts commands
on it, and the engine puts events on it, one for every new piece of text.

When you press Send, the window adds your message to the conversation and asks the engine for a reply.
The engine writes the whole conversation into one long string with markers around every turn, so the
model knows who said what. Then the tokenizer cuts that string into tokens. A token is a small piece of
text: a whole word such as "the" or "model", part of a longer word, a single digit, a space followed by a
word, or a run of punctuation. Every token has a number, and the model only ever sees those numbers.

The model reads all the tokens of the prompt at once. This first step is called prefill, and it is fast
because the graphics card can work on many tokens in parallel. After that the model produces one token at
a time. For each step it computes a score for every token in the vocabulary, the sampler picks one of
the likely tokens, and that token is fed back in as the next input. The loop stops when the model writes
the end-of-turn marker, when it reaches the length limit, or when you press Stop.

Each new token is turned back into text and sent to the window. Some characters take more than one token,
for example an emoji or a letter from an alphabet the vocabulary saw rarely, so the decoder holds the
bytes of a partial character until the rest arrives. The window never shows half a character.

Some models think before they answer. The thinking appears between two markers, and the app can show it in
a separate panel that you can fold away. When the next question comes, the old thinking is left out of
the history, which keeps the prompt short and leaves more room for the conversation itself.

A few questions people ask:
Q: Why is the first reply slower than the rest?
A: The model has to be loaded from disk and the prompt has to be read before the first token appears.
Q: Does anything leave my computer?
A: No. The model, the conversation and the settings all stay on your own machine.
Q: What does the temperature setting do?
A: It changes how adventurous the sampler is. Lower values pick the most likely tokens; higher values
spread the choice over more of them. At zero the reply is the same every time.

Some arithmetic, written out:
1 + 1 = 2
2 + 3 = 5
7 * 8 = 56
12 * 12 = 144
100 - 37 = 63
1024 / 16 = 64
3.14 * 2 = 6.28
0.5 + 0.25 = 0.75
The sum of the numbers from 1 to 100 is 5050.
If a card reads 4800 gigabytes per second and the weights take 28 gigabytes, one pass over the weights
takes about 5.8 milliseconds, so the model can write at most about 170 tokens per second.
A context of 32768 tokens at 16 kilobytes per token needs 512 megabytes.

Some code:

// Returns the index of the largest value, or -1 for an empty list.
int argmax(const std::vector<float>& values) {
  int best = -1;
  for (size_t i = 0; i < values.size(); ++i) {
    if (best < 0 || values[i] > values[best]) best = static_cast<int>(i);
  }
  return best;
}

def softmax(xs):
    m = max(xs)
    exps = [math.exp(x - m) for x in xs]
    total = sum(exps)
    return [e / total for e in exps]

for (const Message& message : conversation.messages) {
  prompt += "<|im_start|>" + message.role + "\n" + message.content + "<|im_end|>\n";
}

struct Settings {
  float temperature = 0.7f;
  float top_p = 0.8f;
  int top_k = 20;
  bool thinking = true;
};

$ ./qwenchat --model model.gguf --context 8192
loading model.gguf: 64 layers, vocabulary of 248320 tokens
ready in 3.2 s

Short exchanges:
User: Hello! Can you help me with a question about fractions?
Assistant: Of course. What would you like to know?
User: What is one half plus one third?
Assistant: One half is three sixths and one third is two sixths, so the sum is five sixths.
User: Thanks, that's clear. I'll try the next one myself.
Assistant: Good luck! You're welcome to check your answer with me.
User: Write a haiku about rain.
Assistant: Soft rain on the roof / the gutters hum their low song / tea cools by the glass.
)corpus";
}

}  // namespace qc
