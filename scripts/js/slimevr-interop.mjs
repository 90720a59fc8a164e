// Decodes SlimeVR datagrams with @slimevr/firmware-protocol (SlimeVR's own
// Node package, through its ESM build) for crates/mocap-core/tests/
// slimevr_interop.rs. Input: a JSON file {"cases": [{"hex", "to_tracker"}]};
// output: a JSON file {"decoded": [...]} with, per datagram, the packet's
// class and its fields as the package reads them, or the error it threw.
//
// usage: node slimevr-interop.mjs IN.json OUT.json

import { readFileSync, writeFileSync } from 'node:fs';
import {
  AVAILABLE_FIRMWARE_FEATURE_FLAGS,
  AVAILABLE_SERVER_FEATURE_FLAGS,
  parse,
} from '@slimevr/firmware-protocol';

const [input, output] = process.argv.slice(2);
const { cases } = JSON.parse(readFileSync(input, 'utf8'));

// Flags as the positions the package knows and those of them set.
function flags(f, available) {
  const known = Object.entries(available);
  return {
    known: known.map(([, p]) => p),
    enabled: known.filter(([k]) => f.has(k)).map(([, p]) => p),
  };
}

function fields(p, toTracker) {
  const out = { name: p.constructor.name };
  for (const [k, v] of Object.entries(p)) {
    if (k === 'flags') {
      out.flags = flags(v, toTracker ? AVAILABLE_SERVER_FEATURE_FLAGS : AVAILABLE_FIRMWARE_FEATURE_FLAGS);
    } else if (k === 'mac') {
      out.mac = v.bytes;
    } else if (k === 'rotation') {
      out.rotation = [v.x, v.y, v.z, v.w];
    } else if (k === 'packets') {
      out.packets = v.map((q) => fields(q, toTracker));
    } else {
      out[k] = v;
    }
  }
  return out;
}

// The package logs unknown types to the console: keep stdout for nothing.
console.log = () => {};

const decoded = cases.map(({ hex, to_tracker: toTracker }) => {
  try {
    const [number, packet] = parse(Buffer.from(hex, 'hex'), toTracker);
    return { number: String(number), packet: packet === null ? null : fields(packet, toTracker) };
  } catch (e) {
    return { error: String(e.message) };
  }
});
writeFileSync(output, JSON.stringify({ decoded }));
