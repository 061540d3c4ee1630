// Token counts of texts by real tokenizers, for tests/integration/tokens.rs.
// stdin: a JSON array of strings; stdout: a JSON array of {cl100k, o200k}.
const cl100k = require("gpt-tokenizer/cjs/encoding/cl100k_base");
const o200k = require("gpt-tokenizer/cjs/encoding/o200k_base");
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const texts = JSON.parse(input);
  const out = texts.map((t) => ({ cl100k: cl100k.encode(t).length, o200k: o200k.encode(t).length }));
  process.stdout.write(JSON.stringify(out));
});
