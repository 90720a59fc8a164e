// An independent protobuf implementation (protobufjs, reading our .proto
// text) checks DLP3D messages our Rust code encodes, and encodes the same
// messages for the Rust side to decode. Run by crates/mocap-core/tests/dlp3d_interop.rs:
//
//   node dlp3d-interop.mjs PROTO IN.json OUT.json
//
// IN: {"cases":[{"message":"OrchestratorV4Response","hex":"…","expect":{…}}]}
// OUT: {"checked":N,"encoded":["hex", …]} — or exit 1 naming the first mismatch.
import protobuf from "protobufjs";
import { readFileSync, writeFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";

const [proto, input, output] = process.argv.slice(2);
const root = new protobuf.Root().loadSync(proto, { keepCase: true });
const { cases } = JSON.parse(readFileSync(input, "utf8"));
const encoded = [];
for (const [i, c] of cases.entries()) {
  const type = root.lookupType(`orchestrator_v4.${c.message}`);
  const decoded = type.decode(Buffer.from(c.hex, "hex"));
  const got = type.toObject(decoded, { defaults: false, bytes: Array, longs: Number });
  if (!isDeepStrictEqual(got, c.expect)) {
    console.error(`case ${i} (${c.message} ${c.expect.class_name}): decoded`, JSON.stringify(got), "expected", JSON.stringify(c.expect));
    process.exit(1);
  }
  const err = type.verify(c.expect);
  if (err) {
    console.error(`case ${i}: ${err}`);
    process.exit(1);
  }
  encoded.push(Buffer.from(type.encode(type.fromObject(c.expect)).finish()).toString("hex"));
}
writeFileSync(output, JSON.stringify({ checked: cases.length, encoded }));
