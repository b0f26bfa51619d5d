#!/usr/bin/env python3
"""docs/performance.md's matrix tables from bench/run-matrix.sh's Google Benchmark JSON.

    python3 bench/matrix_tables.py docs/performance.md bench/results

Reads every bench/results/<machine>/*.json whose context has the matrix keys (tier, isa,
workers, machine, commit) and rewrites what the page holds between its matrix markers: per
machine, one table whose rows are benchmarks (one per worker count) and whose columns are
instruction sets, each benchmark's headline figure, and the speed-up of N workers over 1.
The tables are never typed by hand; run bench/run-matrix.sh (or this, with --check, in CI:
it fails when the page differs from what the files say).
"""
import json
import pathlib
import re
import sys

BEGIN = "<!-- matrix:begin: bench/run-matrix.sh writes this part; do not edit by hand -->"
END = "<!-- matrix:end -->"
ISA_ORDER = ["scalar", "scalar+fma", "sse2", "sse4.2", "avx2+fma", "avx512", "neon64"]
WORKERS = re.compile(r"/workers:(\d+)")


def headline(b):
    """(value, unit, higher_is_better) of a benchmark run."""
    if b["name"].startswith("BM_RagdollStep/"):
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
        return b["real_time"] * scale, "ms/Step", False
    if "steps_per_s" in b:
        return b["steps_per_s"], "steps/s", True
    if "ms_per_frame" in b:
        return b["ms_per_frame"], "ms/frame", False
    if "ns_per_joint" in b:
        return b["ns_per_joint"], "ns/joint", False
    if "items_per_second" in b:
        return b["items_per_second"] / 1e6, "M items/s", True
    unit = b.get("time_unit", "ns")
    return b["real_time"], unit, False


def fmt(value):
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def load(results):
    """machine -> {context, runs: {(name, workers): {isa: benchmark}}}"""
    machines = {}
    for path in sorted(pathlib.Path(results).glob("*/*.json")):
        try:
            doc = json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        ctx = doc.get("context", {}) if isinstance(doc, dict) else {}
        if not all(k in ctx for k in ("tier", "isa", "workers", "machine", "commit")):
            continue  # not a matrix file (older hand-run JSON lives beside them)
        m = machines.setdefault(ctx["machine"], {"context": ctx, "runs": {}, "isas": set()})
        m["isas"].add(ctx["isa"])
        for b in doc.get("benchmarks", []):
            if b.get("run_type", "iteration") != "iteration" or "error_occurred" in b:
                continue
            name = re.sub(r"/(manual_time|real_time|iterations:\d+)", "", b["name"])
            w = WORKERS.search(name)
            workers = int(w.group(1)) if w else 0
            base = WORKERS.sub("", name)
            m["runs"].setdefault((base, workers), {})[ctx["isa"]] = b
    return machines


def table(machine, m):
    ctx = m["context"]
    isas = [i for i in ISA_ORDER if i in m["isas"]] + sorted(i for i in m["isas"] if i not in ISA_ORDER)
    lines = [
        f"#### `{machine}`: {ctx.get('cpu', '')}, tier {ctx['tier']}, commit {ctx['commit']}, "
        f"{ctx.get('date', '')[:10]}",
        "",
        "| benchmark | workers | " + " | ".join(isas) + " | unit | best / scalar | N workers / 1 |",
        "|---|---|" + "---|" * len(isas) + "---|---|---|",
    ]
    for (base, workers) in sorted(m["runs"]):
        row = m["runs"][(base, workers)]
        cells, unit, higher = [], "", True
        values = {}
        for isa in isas:
            if isa in row:
                v, unit, higher = headline(row[isa])
                values[isa] = v
                cells.append(fmt(v))
            else:
                cells.append("")
        best = (max if higher else min)(values.values()) if values else None
        scalar = values.get("scalar")
        ratio = ""
        if best and scalar:
            ratio = f"{(best / scalar if higher else scalar / best):.1f}x"
        scaling = ""
        one = m["runs"].get((base, 1), {})
        if workers > 1 and values and one:
            best_isa = (max if higher else min)(values, key=values.get)
            if best_isa in one:
                v1 = headline(one[best_isa])[0]
                scaling = f"{(values[best_isa] / v1 if higher else v1 / values[best_isa]):.2f}x"
        name = base.removeprefix("BM_")
        lines.append(f"| {name} | {workers or ''} | " + " | ".join(cells) + f" | {unit} | {ratio} | {scaling} |")
    # Jolt's pile scene measures fidelity too: every run's figures, and its state hash (the
    # same for every worker count of one instruction set).
    piles = [(w, isa, row[isa]) for (base, w), row in sorted(m["runs"].items()) if base == "BM_RagdollPiles/simd"
             for isa in isas if isa in row]
    if piles:
        lines += [
            "",
            "Jolt's pile scene (`RagdollPiles`, 8 substeps): speed and fidelity per run (mm; degrees; seconds until "
            "every body sleeps, -1: not within 30 s or not stepped on).",
            "",
            "| isa | workers | steps/s | joint error worst / rest | penetration worst / rest | "
            "limit excess swing / twist | all asleep | state hash |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for w, isa, b in sorted(piles, key=lambda t: (isas.index(t[1]), t[0])):
            g = lambda k: b.get(k, float("nan"))
            lines.append(
                f"| {isa} | {w} | {g('steps_per_s'):.1f} | {g('worst_joint_error_mm'):.1f} / "
                f"{g('rest_joint_error_mm'):.1f} | {g('worst_penetration_mm'):.1f} / {g('rest_penetration_mm'):.1f} | "
                f"{g('worst_swing_excess_deg'):.1f} / {g('worst_twist_excess_deg'):.1f} | {g('all_asleep_s'):.1f} | "
                f"`{b.get('label', '').removeprefix('hash=')}` |")
    return "\n".join(lines)


def render(machines):
    parts = [BEGIN, ""]
    if not machines:
        parts.append("(no matrix results yet: run `bash bench/run-matrix.sh`)")
    for machine in sorted(machines):
        parts += [table(machine, machines[machine]), ""]
    parts.append(END)
    return "\n".join(parts)


def main(argv):
    check = "--check" in argv
    args = [a for a in argv[1:] if a != "--check"]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    readme, results = pathlib.Path(args[0]), args[1]
    text = readme.read_text()
    if BEGIN not in text or END not in text:
        print(f"{readme}: the matrix markers are missing", file=sys.stderr)
        return 1
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + render(load(results)) + tail
    if check:
        if new != text:
            print(f"{readme}: the matrix tables differ from {results} (run bash bench/run-matrix.sh --tables-only)",
                  file=sys.stderr)
            return 1
        return 0
    readme.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
