"""Protein database search: readalign's score pass and top-hit alignments against a synthetic
Swiss-Prot, beside parasail on every host core and CUDASW++4.0 where it is built.

No public protein database can be downloaded where the benchmark runs, so the database is
synthetic, with Swiss-Prot's size (570,000 sequences, about 205M residues; ``--db-sequences``
scales it), a log-normal length distribution with Swiss-Prot's mean length (360 residues,
205M / 570k) and its amino-acid composition (UniProtKB/Swiss-Prot release statistics,
:data:`COMPOSITION`). The 20 queries have the lengths of CUDASW++4.0's benchmark queries
(``allqueries.fasta``, 144-5,478 residues: :data:`QUERY_LENGTHS`), or are read from
``--queries``. Each query has homologs planted at known records (90%, 70% and 50% of its
residues kept, substitutions and short indels), so that the ranking can be checked: every
planted homolog whose exact score (parasail's, where installed) reaches a query's reported
scores must be reported at that score, and every E-value must be within 1% of the formula
``K·m'·n'·e^(−λS)``.

    python -m benchmarks.search --json search.json                    # on the device
    python -m benchmarks.search --db-sequences 3000 --query-count 4 --backend cpu  # small, CPU
    python -m benchmarks.search --cudasw .peers/cudasw4                # with CUDASW++4.0

GCUPS counts query residues times database residues, for the score pass alone; the alignment
row adds the tracebacks of the top ``--max-hits`` per query. Compile time is left out (a
small search runs first).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import re
import subprocess
import tempfile
import time

import numpy as np

from readalign.dbsearch import scan, scores
from readalign.dbsearch.api import default_scoring, load_queries, search
from readalign.dbsearch.database import Database, open_database, write_database
from readalign.dbsearch.report import candidates, traceback
from readalign.dbsearch.scan import score_pass
from readalign.dbsearch.sequences import Proteins
from readalign.dbsearch.statistics import parameters, search_space
from readalign.engine.matrices import ALPHABET
from readalign.runtime import backends

from ._host import device_name, host_line
from ._provenance import provenance

COMPOSITION = {
    "A": 8.25, "R": 5.53, "N": 4.06, "D": 5.45, "C": 1.37, "Q": 3.93, "E": 6.75, "G": 7.07,
    "H": 2.27, "I": 5.96, "L": 9.66, "K": 5.84, "M": 2.42, "F": 3.86, "P": 4.70, "S": 6.56,
    "T": 5.34, "W": 1.08, "Y": 2.92, "V": 6.87,
}
"""Amino-acid composition of UniProtKB/Swiss-Prot, percent (its release statistics)."""
QUERY_LENGTHS = (144, 189, 222, 375, 464, 567, 657, 729, 850, 1000, 1500, 2005, 2504, 3005,
                 3564, 4061, 4548, 4743, 5147, 5478)
"""Lengths of the 20 benchmark queries of CUDASW++ (``allqueries.fasta``)."""
SWISSPROT_SEQUENCES = 570_000
MEAN_LENGTH = 360.0
LENGTH_SIGMA = 0.65
"""Log-normal spread of the lengths (natural log); the median is then about 290 residues."""
MIN_LENGTH, MAX_LENGTH = 2, 35_213
"""Swiss-Prot's shortest and longest (titin) entries."""
PLANTED = (0.9, 0.7, 0.5)
"""Fraction of a query's residues each planted homolog keeps."""


def residue_codes(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` residues drawn from :data:`COMPOSITION`, as codes of ``ALPHABET``."""
    letters = np.array([ALPHABET.index(a) for a in COMPOSITION], np.uint8)
    p = np.array(list(COMPOSITION.values()))
    out = np.empty(count, np.uint8)
    step = 1 << 24  # drawn in blocks: the draw's int64 indices stay small
    for lo in range(0, count, step):
        hi = min(lo + step, count)
        out[lo:hi] = letters[rng.choice(len(letters), size=hi - lo, p=p / p.sum())]
    return out


def lengths(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` log-normal lengths with mean :data:`MEAN_LENGTH`, within Swiss-Prot's range."""
    mu = math.log(MEAN_LENGTH) - LENGTH_SIGMA ** 2 / 2
    return np.clip(np.rint(rng.lognormal(mu, LENGTH_SIGMA, count)), MIN_LENGTH,
                   MAX_LENGTH).astype(np.int64)


def homolog(rng: np.random.Generator, query: np.ndarray, keep: float) -> np.ndarray:
    """``query`` with ``1 - keep`` of its residues changed: substitutions, and one in ten a
    short insertion or deletion."""
    out = []
    changed = rng.random(query.shape[0]) >= keep
    kinds = rng.random(query.shape[0])
    for i, c in enumerate(query.tolist()):
        if not changed[i]:
            out.append(c)
        elif kinds[i] < 0.9:
            out.append(int(residue_codes(rng, 1)[0]))
        elif kinds[i] < 0.95:
            out.extend(residue_codes(rng, int(rng.integers(1, 4))).tolist() + [c])
        # else: deleted
    return np.array(out, np.uint8)


def _proteins(seqs: list[np.ndarray], names: list[str]) -> Proteins:
    offsets = np.zeros(len(seqs) + 1, np.int64)
    np.cumsum([s.shape[0] for s in seqs], out=offsets[1:])
    return Proteins(names, np.concatenate([*seqs, np.zeros(1, np.uint8)]), offsets)


def synthetic(rng: np.random.Generator, count: int, queries: Proteins) -> tuple[Database, list]:
    """The synthetic database and its planted homologs ``(query, record, keep)``: records
    spread evenly over the file, each homolog inside random flanks."""
    n = lengths(rng, count)
    codes = residue_codes(rng, int(n.sum()))
    offsets = np.zeros(count + 1, np.int64)
    np.cumsum(n, out=offsets[1:])
    seqs = [codes[offsets[i]:offsets[i + 1]] for i in range(count)]
    planted = []
    slots = np.linspace(0, count - 1, len(queries) * len(PLANTED) + 2).astype(np.int64)[1:-1]
    for k, record in enumerate(slots.tolist()):
        qi, level = divmod(k, len(PLANTED))
        body = homolog(rng, queries.sequence(qi), PLANTED[level])
        flank = residue_codes(rng, int(rng.integers(0, 60)))
        seqs[record] = np.concatenate([flank, body, residue_codes(rng, int(rng.integers(0, 60)))])
        planted.append((qi, record, PLANTED[level]))
    names = [f"syn|S{i:06d}|SYN" for i in range(count)]
    return Database.of(_proteins(seqs, names)), planted


def synthetic_queries(rng: np.random.Generator, count: int) -> Proteins:
    """Queries of the first ``count`` :data:`QUERY_LENGTHS`, Swiss-Prot's composition."""
    seqs = [residue_codes(rng, n) for n in QUERY_LENGTHS[:count]]
    return _proteins(seqs, [f"query_{n}" for n in QUERY_LENGTHS[:count]])


def write_fasta(path: str, names: list[str], seqs: list[str]) -> None:
    """Sequences as FASTA, one line each (for the peers)."""
    with open(path, "w") as fh:
        fh.writelines(f">{n}\n{s}\n" for n, s in zip(names, seqs, strict=True))


def check_planted(hits, planted: list, exact: dict) -> dict:
    """Each planted homolog whose exact score reaches its query's reported scores is reported
    at that score; the rest are below the last reported score."""
    wrong, reported = [], 0
    for qi, record, keep in planted:
        rows = np.flatnonzero(hits.query == qi)
        where = rows[hits.subject[rows] == record]
        score = exact.get((qi, record))
        if where.size:
            reported += 1
            if score is not None and hits.score[where[0]] != score:
                wrong.append(f"query {qi} record {record}: reported {hits.score[where[0]]}, exact {score}")
        elif score is not None and rows.size and score > hits.score[rows[-1]]:
            wrong.append(f"query {qi} record {record} ({keep:.0%}): score {score} missing")
    return {"planted": len(planted), "reported": reported, "exact_scores": bool(exact),
            "wrong": wrong}


def check_evalues(hits, queries: Proteins, db: Database, matrix: str, go: int, ge: int) -> float:
    """The largest relative difference of a reported E-value from ``K·m'·n'·e^(−λS)``."""
    p = parameters(matrix, go, ge)
    worst = 0.0
    for i in range(len(hits)):
        space = search_space(p, int(queries.lengths[hits.query[i]]), db.residues, len(db))
        want = p.k * space.effective_query * space.effective_db * math.exp(-p.lam * hits.score[i])
        if want == 0.0:  # past the smallest double: the report must say 0 too
            worst = max(worst, 0.0 if hits.evalue[i] == 0.0 else math.inf)
        else:
            worst = max(worst, abs(hits.evalue[i] - want) / want)
    return worst


_PEER: dict = {}


def _parasail_slice(task) -> int:
    import parasail

    qi, lo, hi = task
    query, db = _PEER["queries"][qi], _PEER["db"]
    profile = parasail.profile_create_sat(query, parasail.blosum62)
    best = 0
    for seq in db[lo:hi]:
        best = max(best, parasail.sw_striped_profile_sat(profile, seq, 12, 1).score)
    return best


def time_parasail(queries: list[str], db: list[str], workers: int) -> float | None:
    """Seconds of parasail's striped profile Smith–Waterman (saturating, 12/1 as parasail counts
    BLAST's 11/1) of every query against ``db`` on ``workers`` processes; None without it."""
    try:
        import parasail  # noqa: F401
    except ImportError:
        return None
    _PEER.update(queries=queries, db=db)
    step = max(1, len(db) // (workers * 4))
    tasks = [(qi, lo, min(lo + step, len(db))) for qi in range(len(queries))
             for lo in range(0, len(db), step)]
    with mp.get_context("fork").Pool(workers) as pool:
        t0 = time.perf_counter()
        pool.map(_parasail_slice, tasks, chunksize=1)
        return time.perf_counter() - t0


def exact_scores(queries: list[str], db: list[str], planted: list) -> dict:
    """parasail's scores of the planted pairs (empty without parasail)."""
    try:
        import parasail
    except ImportError:
        return {}
    return {(qi, r): parasail.sw_striped_32(queries[qi], db[r], 12, 1, parasail.blosum62).score
            for qi, r, _ in planted}


def run_cudasw(folder: str, fasta: str, queries_fasta: str, work: str) -> dict:
    """CUDASW++4.0's ``makedb`` (untimed) and ``align`` with its DPX kernels; its own GCUPS."""
    align, makedb = os.path.join(folder, "align"), os.path.join(folder, "makedb")
    if not (os.path.exists(align) and os.path.exists(makedb)):
        return {"status": f"not built in {folder}: its align and makedb are missing"}
    prefix = os.path.join(work, "cudasw", "db")
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    subprocess.run([makedb, fasta, prefix], check=True, capture_output=True)
    cmd = [align, "--query", queries_fasta, "--db", prefix, "--top", "0", "--verbose",
           "--uploadFull", "--prefetchDBFile", "--mat", "blosum62", "--singlePassType", "DPXs16",
           "--manyPassType_small", "DPXs16", "--manyPassType_large", "DPXs32"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    found = re.search(r"Total time:\s*([\d.]+)\s*s,\s*([\d.]+)\s*GCUPS", out.stdout + out.stderr)
    if out.returncode or not found:
        return {"status": f"failed (exit {out.returncode}): {(out.stderr or out.stdout)[-300:]}"}
    return {"status": "ok", "seconds": float(found.group(1)), "gcups": float(found.group(2))}


def texts(p: Proteins | Database) -> list[str]:
    """Every sequence as text, in file order."""
    letters = np.frombuffer(ALPHABET.encode(), np.uint8)
    text = letters[np.asarray(p.codes[:p.offsets[-1]])].tobytes().decode()
    o = p.offsets.tolist()
    seqs = [text[o[i]:o[i + 1]] for i in range(len(o) - 1)]
    if isinstance(p, Proteins):
        return seqs
    out = [""] * len(seqs)
    for pos, record in enumerate(p.index.tolist()):
        out[record] = seqs[pos]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db-sequences", type=int, default=SWISSPROT_SEQUENCES,
                    help="sequences of the synthetic database")
    ap.add_argument("--query-count", type=int, default=len(QUERY_LENGTHS),
                    help="the first N benchmark query lengths")
    ap.add_argument("--queries", help="a FASTA of queries instead (e.g. CUDASW++'s allqueries.fasta)")
    ap.add_argument("--max-hits", type=int, default=10)
    ap.add_argument("--backend", choices=backends.BACKENDS, default="auto")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--score-kernel", choices=("search", "engine"), default=scan.KERNEL,
                    help="what scores the chunks: the search's own kernel or the pair engine")
    ap.add_argument("--unpacked", action="store_true",
                    help="GPU: every pair in 32-bit cells (no two sequences a lane in 16-bit halves)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-parasail", action="store_true", help="leave parasail out")
    ap.add_argument("--check-cpu", action="store_true",
                    help="also run the whole search on the CPU backend and compare every column")
    ap.add_argument("--cudasw", metavar="DIR", help="folder holding CUDASW++4.0's align and makedb")
    ap.add_argument("--workdir", help="keep the database files here (default: a temporary folder)")
    ap.add_argument("--json", help="write every number here")
    args = ap.parse_args()
    started = provenance(__spec__.name)
    backend = backends.resolve(args.backend)
    scan.KERNEL = args.score_kernel
    scores.PACKED = not args.unpacked
    print(f"device: {device_name(args.backend)}", flush=True)
    print(host_line(), flush=True)
    rng = np.random.default_rng(args.seed)
    queries = (load_queries(args.queries) if args.queries
               else synthetic_queries(rng, args.query_count))
    t0 = time.perf_counter()
    built, planted = synthetic(rng, args.db_sequences, queries)
    work = args.workdir or tempfile.mkdtemp(prefix="readalign-search-")
    radb, fasta = os.path.join(work, "db.radb"), os.path.join(work, "db.fa")
    write_database(built, radb)
    db = open_database(radb)
    print(f"database: {len(db):,} sequences, {db.residues:,} residues "
          f"({time.perf_counter() - t0:.1f} s to make); {len(queries)} queries, "
          f"{queries.residues:,} residues", flush=True)
    scoring = default_scoring()
    q_text, db_text = texts(queries), texts(db)
    sample = db.index[np.linspace(0, len(db) - 1, min(len(db), 64)).astype(np.int64)]
    search(queries, [db_text[r] for r in sample.tolist()], backend=backend)  # compile first
    cells = queries.residues * db.residues
    t0 = time.perf_counter()
    best = score_pass(queries, db, scoring, args.max_hits, backend, args.threads)
    t_scores = time.perf_counter() - t0
    params = parameters("BLOSUM62", 11, 1)
    found = candidates(queries, db, best, params, 10.0)
    t0 = time.perf_counter()
    hits = traceback(queries, db, found, scoring, backend, args.threads)
    t_align = time.perf_counter() - t0
    rows = [{"name": "score pass", "seconds": t_scores, "gcups": cells / t_scores / 1e9},
            {"name": f"score pass + top-{args.max_hits} alignments", "seconds": t_scores + t_align,
             "gcups": cells / (t_scores + t_align) / 1e9, "alignments": len(hits)}]
    checks = {"planted": check_planted(hits, planted, exact_scores(q_text, db_text, planted)),
              "evalue_max_relative_difference": check_evalues(hits, queries, db, "BLOSUM62", 11, 1)}
    if args.check_cpu:
        cpu = search(queries, db, scoring, args.max_hits, backend="cpu", threads=args.threads)
        checks["cpu_equal"] = all(np.array_equal(cpu[c], hits[c]) for c in hits.columns)
    peers: dict = {}
    if not args.no_parasail:
        secs = time_parasail(q_text, db_text, os.cpu_count() or 1)
        peers["parasail"] = ({"status": "not installed"} if secs is None else
                             {"status": "ok", "seconds": secs, "gcups": cells / secs / 1e9,
                              "workers": os.cpu_count()})
    if args.cudasw:
        write_fasta(fasta, [db.names[i] for i in range(len(db))], db_text)
        qfa = args.queries or os.path.join(work, "queries.fa")
        if not args.queries:
            write_fasta(qfa, queries.names, q_text)
        peers["cudasw4"] = run_cudasw(args.cudasw, fasta, qfa, work)
    print()
    print(f"{'workload':<40} {'seconds':>10} {'GCUPS':>10}")
    for row in rows:
        print(f"readalign {row['name']:<30} {row['seconds']:10.3f} {row['gcups']:10.1f}")
    for name, peer in peers.items():
        if peer.get("status") == "ok":
            print(f"{name:<40} {peer['seconds']:10.3f} {peer['gcups']:10.1f}")
        else:
            print(f"{name:<40} {peer['status']}")
    print(f"planted homologs: {checks['planted']['planted']}, reported "
          f"{checks['planted']['reported']}, wrong: "
          f"{checks['planted']['wrong'] or 'none'}; E-values within "
          f"{checks['evalue_max_relative_difference']:.2e} of the formula"
          + (f"; CPU == {backend}: {checks['cpu_equal']}" if "cpu_equal" in checks else ""))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({**started, "device": device_name(args.backend), "args": vars(args),
                       "database": {"sequences": len(db), "residues": db.residues},
                       "queries": {"count": len(queries), "residues": queries.residues},
                       "rows": rows, "peers": peers, "checks": checks}, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
