"""Results published elsewhere: read into audiobench result files, and checked against runs.

- :mod:`~audiobench.reported.model_ids`: the one table pairing a publisher's model id
  (``openai/whisper-large-v3``) with the audiobench model computing the same embeddings;
- :mod:`~audiobench.reported.mteb_import`: MTEB's result files as audiobench results marked
  *reported* (``audiobench results import-mteb``);
- :mod:`~audiobench.reported.compare`: a reproduction check of one set of results against
  another (``audiobench results compare``).
"""
