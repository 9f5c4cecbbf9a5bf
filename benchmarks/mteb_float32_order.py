"""How far float32 summation order moves the protocol=mteb numbers (compare tolerances)."""

import numpy as np

from audiobench.evaluators.mteb_protocol.trec_retrieval import trec_retrieval_scores
from audiobench.machine import cpu_description
from audiobench.metrics.pair_classification import pair_classification_scores

# Summation order, and so these figures, depend on the CPU's vector units and the BLAS build.
print(f"CPU: {cpu_description()}")
rng = np.random.default_rng(0)
worst_pair = 0.0
for _ in range(5):
    n, d = 2000, 768
    base = rng.standard_normal((n, d)).astype(np.float32)
    a = base
    b = (base * 0.3 + rng.standard_normal((n, d)).astype(np.float32)).astype(np.float32)
    labels = (rng.random(n) < 0.5).astype(int)
    b[labels == 0] = rng.standard_normal((int((labels == 0).sum()), d)).astype(np.float32)
    r1 = pair_classification_scores(a, b, labels, precision="float32")
    # Another summation order: the dimensions reversed (as another BLAS or torch may sum).
    r2 = pair_classification_scores(
        a[:, ::-1].copy(), b[:, ::-1].copy(), labels, precision="float32"
    )
    worst_pair = max(worst_pair, max(abs(r1[k] - r2[k]) for k in r1 if "threshold" not in k))
print("pair classification, float32 summation order: max |diff| =", worst_pair)

worst_ret = 0.0
for _ in range(5):
    nq, nd, d = 500, 3000, 512
    docs = rng.standard_normal((nd, d)).astype(np.float32)
    target = rng.integers(0, nd, nq)
    q = (docs[target] + 2.0 * rng.standard_normal((nq, d))).astype(np.float32)

    def cos(x, y):
        x = x / np.linalg.norm(x, axis=1, keepdims=True)
        y = y / np.linalg.norm(y, axis=1, keepdims=True)
        return (x @ y.T).astype(np.float32)

    rel = [[int(t)] for t in target]
    s1 = trec_retrieval_scores(cos(q, docs), rel)
    s2 = trec_retrieval_scores(cos(q[:, ::-1].copy(), docs[:, ::-1].copy()), rel)
    worst_ret = max(worst_ret, max(abs(s1[k] - s2[k]) for k in s1))
print("retrieval, float32 summation order: max |diff| =", worst_ret)
