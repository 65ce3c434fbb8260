"""The reward for trainers other than TRL: a reward service over HTTP and each trainer's calling convention.

One module per concern, each imported on its own (nothing here is imported by ``import evolvecoder_datasets``):

- :mod:`~.server`: the service (``evolvecoder-datasets serve``): the sandbox and the judge behind ``POST /score``
  and OpenRLHF's remote-reward protocol (``POST /openrlhf``), with a token, size and queue limits, health and
  metrics, and a graceful shutdown;
- :mod:`~.protocol`: the request bodies it reads;
- :mod:`~.client`: a standard-library client of ``/score``;
- :mod:`~.verl`: verl's ``compute_score`` (loadable by file path) and the export of a round to verl's parquet rows;
- :mod:`~.verifiers_env`: a verifiers v1 ``Taskset`` package built from a round.

Example:
    >>> from evolvecoder_datasets.integrations.protocol import completion_from_query
    >>> completion_from_query("<|im_start|>assistant\\nx = 1<|im_end|>")
    'x = 1'
"""

__all__: list[str] = []  # nothing is exported here: import the modules themselves
