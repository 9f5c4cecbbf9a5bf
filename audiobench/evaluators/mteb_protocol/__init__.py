"""MTEB's scoring protocol (``-O protocol=mteb``), reproduced number for number.

:mod:`audiobench.evaluators.mteb` registers one evaluator per family; what they compute is
here: :mod:`.subset_scores` scores one subset of each family as MTEB scores its (audio) task
type and holds the report models; beneath it, pure functions each checked against MTEB's own
evaluator (``tests/mteb_protocol/test_mteb_protocols.py``): few-shot logistic regression
(:mod:`.logistic_regression`) and its reports (:mod:`.prediction_report`), bootstrapped
mini-batch k-means (:mod:`.kmeans_bootstrap`), ``trec_eval``'s retrieval and reranking metrics
(:mod:`.trec_retrieval`), zero-shot classification by arg-max (:mod:`.zero_shot_argmax`) and
float32 cosine scores as MTEB computes them (:mod:`.cosine_scores`).
"""
