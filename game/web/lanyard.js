"use strict";
// Tumbleyard's page: the calls the game makes into the page (game/src/page/js.rs),
// registered with miniquad's loader (gl.js) as the plugin "lanyard". The data channel to
// the host is unordered and unreliable: datagrams, as UDP carries them natively.

const lanyard = {
    pc: null,
    channel: null,
    // 0: opening, 1: open, 2: failed or closed.
    state: 0,
    // What the host sent: [bytes, when it arrived (performance.now())].
    inbox: [],
    // How long ago the datagram last taken arrived, in milliseconds.
    age: 0,
};

function lanyardBytes(ptr, len) {
    return new Uint8Array(wasm_memory.buffer, ptr, len);
}

function lanyardText(ptr, len) {
    return new TextDecoder().decode(lanyardBytes(ptr, len).slice());
}

// Writes `text` at `ptr` (at most `cap` bytes) and returns its whole length.
function lanyardPut(text, ptr, cap) {
    const bytes = new TextEncoder().encode(text);
    lanyardBytes(ptr, Math.min(cap, bytes.length)).set(bytes.subarray(0, cap));
    return bytes.length;
}

async function lanyardOpen() {
    if (lanyard.pc) {
        try { lanyard.pc.close(); } catch (e) { /* already closed */ }
    }
    lanyard.state = 0;
    lanyard.inbox = [];
    const pc = new RTCPeerConnection({ iceServers: [] });
    const channel = pc.createDataChannel("lanyard", { ordered: false, maxRetransmits: 0 });
    channel.binaryType = "arraybuffer";
    channel.onopen = () => { if (lanyard.pc === pc) lanyard.state = 1; };
    channel.onclose = () => { if (lanyard.pc === pc) lanyard.state = 2; };
    channel.onmessage = (e) => {
        if (lanyard.pc === pc) lanyard.inbox.push([new Uint8Array(e.data), performance.now()]);
    };
    lanyard.pc = pc;
    lanyard.channel = channel;
    try {
        const offer = await pc.createOffer();
        await pc.setLocalDescription(offer);
        const res = await fetch("/rtc", { method: "POST", body: offer.sdp });
        const body = await res.text();
        if (!res.ok) throw new Error(body);
        await pc.setRemoteDescription({ type: "answer", sdp: body });
    } catch (e) {
        console.log("lanyard: the channel did not open: " + e);
        if (lanyard.pc === pc) lanyard.state = 2;
    }
}

// A screenshot: the game's RGBA pixels (bottom row first) as a PNG, to the console.
function lanyardShot(width, height, ptr, len) {
    const canvas = document.createElement("canvas");
    canvas.width = width;
    canvas.height = height;
    const ctx = canvas.getContext("2d");
    const img = ctx.createImageData(width, height);
    const src = lanyardBytes(ptr, len);
    const row = width * 4;
    for (let y = 0; y < height; y++) {
        img.data.set(src.subarray((height - 1 - y) * row, (height - y) * row), y * row);
    }
    ctx.putImageData(img, 0, 0);
    console.log("lanyard-shot " + canvas.toDataURL("image/png"));
}

miniquad_add_plugin({
    name: "lanyard",
    version: 1,
    register_plugin: (importObject) => {
        const env = importObject.env;
        env.lanyard_random = (ptr, len) => { crypto.getRandomValues(lanyardBytes(ptr, len)); };
        env.lanyard_query = (ptr, cap) => lanyardPut(location.search, ptr, cap);
        env.lanyard_host = (ptr, cap) => lanyardPut(location.host, ptr, cap);
        env.lanyard_console = (ptr, len) => { console.log(lanyardText(ptr, len)); };
        env.lanyard_shot = lanyardShot;
        env.lanyard_now = () => performance.now();
        env.lanyard_rtc_open = () => { lanyardOpen(); };
        env.lanyard_rtc_state = () => lanyard.state;
        env.lanyard_rtc_send = (ptr, len) => {
            if (lanyard.state !== 1) return;
            try { lanyard.channel.send(lanyardBytes(ptr, len).slice()); } catch (e) { /* full or closing */ }
        };
        env.lanyard_rtc_recv = (ptr, cap) => {
            const next = lanyard.inbox.shift();
            if (!next) return -1;
            const [bytes, at] = next;
            lanyard.age = performance.now() - at;
            const n = Math.min(cap, bytes.length);
            lanyardBytes(ptr, n).set(bytes.subarray(0, n));
            return n;
        };
        env.lanyard_rtc_age = () => lanyard.age;
    },
});
