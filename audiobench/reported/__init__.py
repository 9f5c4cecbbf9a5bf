"""Results published elsewhere: read into audiobench result files, and checked against runs.

- :mod:`~audiobench.reported.model_ids`: the one table pairing a publisher's model id
  (``openai/whisper-large-v3``) with the audiobench model computing the same embeddings;
- :mod:`~audiobench.reported.mteb_import`: MTEB's result files as audiobench results marked
  *reported* (``audiobench results import-mteb``);
- :mod:`~audiobench.reported.mseb_format`, :mod:`~audiobench.reported.mseb_export` and
  :mod:`~audiobench.reported.mseb_import`: MSEB's result lines written from audiobench results
  (``audiobench results export --format mseb``) and read into results marked *reported*
  (``audiobench results import-mseb``);
- :mod:`~audiobench.reported.compare`: a reproduction check of one set of results against
  another (``audiobench results compare``).
"""
