// Verifies a Tumbleyard recording in WebAssembly, under node:
//   node verify.mjs lanyard_game_verify.wasm RECORDING
// Prints the outcome as JSON (see game/verify/src/lib.rs); exits 1 unless it matched.
import { readFileSync } from "node:fs";

const [wasmPath, recordingPath] = process.argv.slice(2);
if (!wasmPath || !recordingPath) {
    console.error("usage: node verify.mjs lanyard_game_verify.wasm RECORDING");
    process.exit(2);
}
// The module imports nothing it calls here; anything it asks for is a stub that says so.
const stub = new Proxy({}, { get: (_, name) => () => { throw new Error(`no ${String(name)} here`); } });
const { instance } = await WebAssembly.instantiate(readFileSync(wasmPath), { env: stub });
const e = instance.exports;
const recording = readFileSync(recordingPath);
const ptr = e.lanyard_verify_alloc(recording.length);
new Uint8Array(e.memory.buffer, ptr, recording.length).set(recording);
const n = e.lanyard_verify(ptr, recording.length);
const text = new TextDecoder().decode(new Uint8Array(e.memory.buffer, e.lanyard_verify_result(), n));
console.log(text);
const outcome = JSON.parse(text);
process.exit(outcome.hash && outcome.diverged === null ? 0 : 1);
