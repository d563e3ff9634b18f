"""A wall-clock sampling profiler for the benches (no py-spy here): a daemon thread reads
every thread's stack (`sys._current_frames`) every `every` seconds and counts, per thread
name, the functions on the stack (inclusive) and the one running (self). Waiting shows as
the call that waits (e.g. `consume`), so it answers "where does the pump's time go", not
only the CPU's.

    with Sampler() as s: ...
    print(s.report())
"""
from __future__ import annotations

import sys
import threading
from collections import Counter


class Sampler(threading.Thread):
    def __init__(self, every: float = 0.005, threads: tuple[str, ...] | None = None):
        super().__init__(name="bench-sampler", daemon=True)
        self.every, self.only = every, threads
        self.inclusive: dict[str, Counter] = {}
        self.leaf: dict[str, Counter] = {}
        self.samples: Counter = Counter()
        self._stop_event = threading.Event()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self._stop_event.set()
        self.join()

    def run(self) -> None:
        me = threading.get_ident()
        while not self._stop_event.wait(self.every):
            names = {t.ident: t.name for t in threading.enumerate()}
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                name = names.get(ident, str(ident))
                name = name.split("_")[0] if name.startswith("ThreadPoolExecutor") else name
                if self.only and not any(name.startswith(p) for p in self.only):
                    continue
                self.samples[name] += 1
                seen = set()
                first = True
                while frame is not None:
                    code = frame.f_code
                    key = f"{_short(code.co_filename)}:{code.co_name}"
                    if first:
                        self.leaf.setdefault(name, Counter())[key] += 1
                        first = False
                    if key not in seen:
                        self.inclusive.setdefault(name, Counter())[key] += 1
                        seen.add(key)
                    frame = frame.f_back

    def report(self, top: int = 25) -> str:
        out = []
        for name, n in self.samples.most_common():
            if n < 20:
                continue
            out.append(f"thread {name}: {n} samples ({n * self.every:.1f} s)")
            out.append("  inclusive: " + "; ".join(f"{k} {v / n:.0%}" for k, v in self.inclusive[name].most_common(top)))
            out.append("  self:      " + "; ".join(f"{k} {v / n:.0%}" for k, v in self.leaf[name].most_common(12)))
        return "\n".join(out)


def _short(path: str) -> str:
    parts = path.rsplit("/", 2)
    return "/".join(parts[-2:]) if len(parts) > 1 else path
