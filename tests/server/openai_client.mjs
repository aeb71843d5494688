// Drives qwenchat-server with the official `openai` npm client (tools/npm, pinned), as editors and agents
// do. Prints one line per check; exits 1 on the first
// failure. The model is the default model (greedy, so the answers are fixed).
// Usage: node openai_client.mjs BASE_URL API_KEY NPM_DIR (tools/npm, where `npm ci` installed the client).
import { createRequire } from "node:module";

const [baseURL, apiKey, npmDir] = process.argv.slice(2);
const openaiModule = createRequire(`${npmDir}/package.json`)("openai");
const OpenAI = openaiModule.default ?? openaiModule;
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 300_000 });
const check = (ok, what, detail) => {
  if (!ok) {
    console.log(`FAIL: ${what}: ${JSON.stringify(detail)}`);
    process.exit(1);
  }
  console.log(`ok: ${what}`);
};
const question = [{ role: "user", content: "What is 17 + 25?" }];
const common = { model: "qwenchat-default", temperature: 0, max_tokens: 48,
                 chat_template_kwargs: { enable_thinking: false } };

const models = await client.models.list();
check(models.data.length === 1 && models.data[0].id === "qwenchat-default", "models.list", models.data);

const whole = await client.chat.completions.create({ ...common, messages: question });
const answer = whole.choices[0].message.content;
check(answer.includes("42"), "chat.completions.create answers 42", answer);
check(whole.usage.prompt_tokens > 0 && whole.usage.completion_tokens > 0 &&
      whole.usage.total_tokens === whole.usage.prompt_tokens + whole.usage.completion_tokens, "usage", whole.usage);
check(whole.choices[0].finish_reason === "stop", "finish_reason stop", whole.choices[0]);

const stream = await client.chat.completions.create({ ...common, messages: question, stream: true,
                                                      stream_options: { include_usage: true } });
let streamed = "", chunks = 0, usage = null, finish = null;
for await (const chunk of stream) {
  ++chunks;
  if (chunk.usage) usage = chunk.usage;
  const c = chunk.choices[0];
  if (c?.delta?.content) streamed += c.delta.content;
  if (c?.finish_reason) finish = c.finish_reason;
}
check(chunks > 2, "streamed in several chunks", chunks);
check(streamed === answer, "streamed text equals the whole reply", { streamed, answer });
check(usage && usage.completion_tokens === whole.usage.completion_tokens, "streamed usage", usage);
check(finish === "stop", "streamed finish_reason", finish);

const stopped = await client.chat.completions.create({ ...common, messages: question, stop: ["="] });
const cut = stopped.choices[0].message.content;
check(!cut.includes("=") && answer.startsWith(cut), "stop string cuts the reply", { cut, answer });

const limited = await client.chat.completions.create({ ...common, messages: question, max_tokens: 2 });
check(limited.choices[0].finish_reason === "length" && limited.usage.completion_tokens === 2, "max_tokens", limited);

const text = await client.completions.create({ model: "qwenchat-default", temperature: 0, max_tokens: 48,
  prompt: "<|im_start|>user\nWhat is 17 + 25?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n" });
check(text.choices[0].text === answer, "completions.create continues the raw prompt", text.choices[0].text);

const seeded = { ...common, messages: [{ role: "user", content: "Tell me a story." }], temperature: 1, seed: 5 };
const a = await client.chat.completions.create(seeded);
const b = await client.chat.completions.create(seeded);
check(a.choices[0].message.content === b.choices[0].message.content, "same seed, same reply",
      [a.choices[0].message.content, b.choices[0].message.content]);

// Errors reach the client as APIError with the server's status and message.
try {
  await client.chat.completions.create({ ...common, messages: question, n: 3 });
  check(false, "n=3 refused", "accepted");
} catch (e) {
  check(e instanceof OpenAI.APIError && e.status === 400 && /n must be 1/.test(e.message), "n=3 refused", e.message);
}
const bad = new OpenAI({ baseURL, apiKey: "wrong", maxRetries: 0 });
try {
  await bad.models.list();
  check(false, "wrong key refused", "accepted");
} catch (e) {
  check(e instanceof OpenAI.AuthenticationError && e.status === 401, "wrong key refused", e.message);
}

// A client that goes away: abort a long stream after a few chunks; the server cancels that generation.
const controller = new AbortController();
const long = await client.chat.completions.create(
  { ...common, messages: [{ role: "user", content: "Tell me a long story." }], max_tokens: 100000,
    ignore_eos: true, stream: true }, { signal: controller.signal });
let seen = 0;
try {
  for await (const chunk of long) {
    if (++seen === 3) controller.abort();
  }
} catch (e) {
  check(e.name === "APIUserAbortError" || e.name === "AbortError", "abort mid-stream", e.name);
}
check(seen >= 3, "aborted after three chunks", seen);

// N parallel streaming clients: all complete with the same greedy reply.
const N = Number(process.env.QWENCHAT_LOAD_CLIENTS || 8);
const runs = await Promise.all(Array.from({ length: N }, async () => {
  const s = await client.chat.completions.create({ ...common, messages: question, stream: true });
  let t = "";
  for await (const c of s) t += c.choices[0]?.delta?.content || "";
  return t;
}));
check(runs.every((t) => t === answer), `${N} parallel streams complete with the same reply`, runs);
console.log("openai client: all checks passed");
