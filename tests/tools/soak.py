#!/usr/bin/env python3
"""A soak run of a Lanyard server on this machine (a tool, not a CI test).

    cargo build --release -p lanyard-game --no-default-features
    python3 tests/tools/soak.py [--bots 64] [--seconds 600] [--corrupt 0.03] [--port 47990]

Starts a dedicated server on 127.0.0.1 and keeps BOTS bots playing it through a relay on
127.0.0.1 that corrupts CORRUPT of the datagrams both ways, with churn the whole time:

* leaves and joins: each bot plays for 30 to 180 s, then leaves; a new one joins in its
  place;
* freezes and resumes: every few seconds one bot is stopped (SIGSTOP) for 2 to 12 s, long
  enough for the server to suspend its session, and then continued to resume it;
* a hello flood: every 120 s, 15 s of 27 000 hellos a second from 64 ports of 127.0.0.2
  (tests/tools/flood_hellos.py), straight at the server.

Every address is on 127.0.0.0/8: the server and the bots on 127.0.0.1, the relay's side
towards the server on 127.0.1.N (one address a bot, as on a LAN). At the end it prints one JSON object: bot sessions, those
lost (a bot whose run did not end "time up"), resumes, the server's memory over time
(VmRSS every 10 s), its worst and median 5-second mean frame from its status lines, and the
relay's and flooder's counts.
"""
import argparse, collections, json, os, random, re, select, signal, socket, subprocess, sys, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class Relay(threading.Thread):
    """Forwards datagrams between clients and the server, corrupting a share of them."""

    def __init__(self, listen_port, server, corrupt, seed):
        super().__init__(daemon=True)
        self.listen = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.listen.bind(("127.0.0.1", listen_port))
        self.server, self.corrupt = server, corrupt
        self.rng = random.Random(seed)
        self.up = {}  # client address -> socket towards the server
        self.down = {}  # that socket -> client address
        self.forwarded = self.corrupted = 0
        self.stop = False

    def damage(self, data):
        if data and self.rng.random() < self.corrupt:
            self.corrupted += 1
            b = bytearray(data)
            b[self.rng.randrange(len(b))] ^= 1 << self.rng.randrange(8)
            return bytes(b)
        return data

    def run(self):
        while not self.stop:
            socks = [self.listen] + list(self.down)
            ready, _, _ = select.select(socks, [], [], 0.2)
            for s in ready:
                try:
                    data, addr = s.recvfrom(2048)
                except OSError:
                    continue
                self.forwarded += 1
                if s is self.listen:
                    up = self.up.get(addr)
                    if up is None:
                        up = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                        # Each client from its own loopback address, as on a LAN.
                        n = len(self.up)
                        up.bind((f"127.0.{1 + n // 250}.{1 + n % 250}", 0))
                        self.up[addr], self.down[up] = up, addr
                    up.sendto(self.damage(data), self.server)
                else:
                    self.listen.sendto(self.damage(data), self.down[s])


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bots", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--corrupt", type=float, default=0.03)
    ap.add_argument("--port", type=int, default=47990)
    ap.add_argument("--flood-every", type=float, default=120)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--log", default="/tmp/lanyard-soak-server.log", help="the server's output")
    ap.add_argument("--game", default=os.path.join(ROOT, "target/release/lanyard-game"))
    a = ap.parse_args()
    rng = random.Random(a.seed)
    env = dict(os.environ, LANYARD_DISCOVERY_ADDR="127.255.255.255:47800")
    env.pop("LANYARD_RENDEZVOUS", None)
    relay_port = a.port + 1
    total = a.seconds + 15

    server = subprocess.Popen(
        [a.game, "server", "--port", str(a.port), "--seconds", str(int(total)),
         "--max-players", "64", "--name", "soak"],
        cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    frames, warnings = [], []

    log = open(a.log, "w")

    def read_server():
        for line in server.stdout:
            log.write(line)
            m = re.search(r"\| frame ([0-9.]+) ms \|", line)
            if m:
                frames.append(float(m.group(1)))
            elif "WARN" in line or "ERROR" in line:
                warnings.append(line.strip())

    threading.Thread(target=read_server, daemon=True).start()
    relay = Relay(relay_port, ("127.0.0.1", a.port), a.corrupt, a.seed)
    relay.start()
    time.sleep(1.0)
    if server.poll() is not None:
        sys.exit(f"the server did not start (exit status {server.returncode})")

    t0 = time.time()
    bots = {}  # Popen -> (name, started)
    results = []
    serial = 0
    frozen = {}  # Popen -> when to continue it
    memory = []
    floods = []
    next_freeze, next_sample = t0 + 5, t0
    next_flood = t0 + min(a.flood_every, a.seconds / 2)
    flood = None

    def start_bot():
        nonlocal serial
        serial += 1
        left = a.seconds - (time.time() - t0)
        secs = max(5, min(left, rng.uniform(30, 180)))
        p = subprocess.Popen(
            [a.game, "bot", f"127.0.0.1:{relay_port}", "--seed", str(serial),
             "--name", f"soak{serial}", "--seconds", f"{secs:.0f}"],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True)
        bots[p] = (f"soak{serial}", time.time())

    for _ in range(a.bots):
        start_bot()
        time.sleep(0.15)
    while time.time() - t0 < a.seconds or bots:
        now = time.time()
        if server.poll() is not None:
            print(f"the server exited early (status {server.returncode})", file=sys.stderr)
            break
        for p in list(bots):
            if p.poll() is None:
                continue
            name, started = bots.pop(p)
            frozen.pop(p, None)
            out = p.stdout.read()
            try:
                rep = json.loads(out.strip().splitlines()[-1])
            except (ValueError, IndexError):
                rep = {}
            results.append({"name": name, "status": p.returncode,
                            "ended": rep.get("ended", "no report"),
                            "resumes": rep.get("resumes", 0),
                            "seconds": round(now - started, 1)})
            if now - t0 < a.seconds - 10:
                start_bot()
        for p, until in list(frozen.items()):
            if now >= until:
                p.send_signal(signal.SIGCONT)
                del frozen[p]
        if now >= next_freeze and now - t0 < a.seconds - 20:
            next_freeze = now + rng.uniform(3, 8)
            live = [p for p in bots if p not in frozen and p.poll() is None]
            if live:
                p = rng.choice(live)
                p.send_signal(signal.SIGSTOP)
                frozen[p] = now + rng.uniform(2, 12)
        if now >= next_sample:
            next_sample = now + 10
            memory.append([round(now - t0), rss_kb(server.pid)])
        if flood is None and now >= next_flood and now - t0 < a.seconds - 20:
            next_flood = now + a.flood_every
            flood = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "flood_hellos.py"), str(a.port), "27000", "15", "-", "127.0.0.2"],
                stdout=subprocess.PIPE, text=True)
        if flood is not None and flood.poll() is not None:
            floods.append(flood.stdout.read().strip())
            flood = None
        time.sleep(0.1)
    for p in frozen:
        p.send_signal(signal.SIGCONT)
    for p in bots:
        p.kill()
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)
    relay.stop = True
    lost = [r for r in results if r["ended"] != "time up"]
    kb = [m[1] for m in memory if m[1]]
    ordered = sorted(frames)
    print(json.dumps({
        "bots": a.bots, "seconds": a.seconds, "corrupt": a.corrupt,
        "sessions": len(results), "sessions_lost": len(lost), "lost": lost[:10],
        "ended": dict(collections.Counter(r["ended"] for r in results)),
        "first_ended": results[:3],
        "resumes": sum(r["resumes"] for r in results),
        "server_rss_kb": {"first": kb[0] if kb else None, "last": kb[-1] if kb else None,
                          "max": max(kb) if kb else None, "samples": memory},
        "frame_ms": {"worst_5s_mean": ordered[-1] if ordered else None,
                     "median_5s_mean": ordered[len(ordered) // 2] if ordered else None,
                     "windows": len(frames)},
        "relay": {"forwarded": relay.forwarded, "corrupted": relay.corrupted},
        "floods": floods, "server_warnings": len(warnings),
        "server_warning_kinds": sorted({re.sub(r"[0-9.]+", "N", w.split("WARN", 1)[-1])[:120]
                                        for w in warnings})[:20],
        "server_exit": server.returncode,
    }, indent=1))


if __name__ == "__main__":
    main()
