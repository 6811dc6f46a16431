"""Masking a corpus: detect, mask, keep the mappings apart (chapter 10, "Masking a corpus").

A package of five stages, each a module: `read` (JSONL by Python's reader, which names the
line; Parquet, the fast input, by Arrow), `batch` (`MaskBatch`, the per-batch function),
`engines` (local and Ray), `publish` (`mask_corpus`, through `piilab.files`) and `verify`
(`verify_corpus`). Every public name is re-exported here.

`mask_corpus(input_path, out_dir, detector="rules")` reads a JSONL or Parquet corpus
(records with ``id`` and ``source_text``; other columns are dropped unless named in
``keep_columns``, see "What is published" below), finds the candidates
of each document with a detector (the rule baseline of `piilab.baseline`, or a model
through `piilab.inference`), masks each document with `piilab.masking.mask_text`,
and writes::

    OUT/
      masked/part-00000.parquet ...    id, masked_text, and only the columns named in keep_columns
      mappings/part-00000.jsonl ...    {"id", "mapping"} per record, mode 0600 (sensitive)
      manifest.json                    counts, SHA-256 of every file, which files are sensitive

What is published: only ``masked_text`` is masked. Every other column of the input is
dropped unless the caller names it in ``keep_columns``, because a column the detector never
read (``notes``, ``customer_email``, a data set's gold ``entities``) would reach the output
in clear text. A kept column is copied *unmasked*: the manifest lists it under
``unmasked_columns``, and the masked files then count as sensitive (mode 0600,
``"sensitive": true``) like the mappings. Dropped columns are listed by name under
``dropped_columns``. ``id`` is always kept (it joins a record to its mapping);
``source_text`` can never be kept, and ``masked_text`` is the output's own column.

The two engines run the same per-batch function (`MaskBatch`):

- ``engine="local"``: one process, batch after batch;
- ``engine="ray"``: Ray Data. The corpus becomes a dataset of ``blocks`` blocks,
  ``map_batches`` runs `MaskBatch` in an actor pool of ``workers`` actors (so a model is
  loaded once per actor, not once per batch), and the results stream back to the driver,
  which writes the files. Ray starts locally (usage statistics off, no dashboard, nothing
  reached over the network) unless ``address`` (or ``RAY_ADDRESS``) names a cluster.
  Actors that die are restarted and their batches retried by Ray; the driver checks that
  every input row came back exactly once.

Determinism: tokens are numbered per document (`mask_text` sees one document at a time),
so a document's masked text and mapping do not depend on which other documents share its
batch, block or worker. Rows are written in input order, ``rows_per_file`` per partition
(partitions follow the input, not the blocks), with fixed Parquet settings, so the output
files are byte-identical for either engine and any number of workers or blocks. (With a
model detector this also relies on greedy decoding being batch-invariant, which
`piilab.inference.generate` is tested for; with the rule detector it holds by
construction.)

Nothing half-written looks finished: everything is written into a hidden staging folder
next to ``OUT`` (``.piilab-<pid>-<random>.tmp``, `piilab.files.publish_folder`), the
manifest last, and the folder is renamed to ``OUT`` at the end; an interrupted run removes
its staging folder, and the next run removes one that a killed run left. `verify_corpus(OUT)`
checks every file against the manifest and restores a sample of records from their
mappings to prove the round trip (it needs no source text: restoring a record and masking
the result again with its mapping's spellings must give back the same masked text and
mapping).

Nothing here prints or logs text, values or mappings: progress shows record counts and
records/s; the optional tracker (`piilab.tracking`) gets counts, throughput and the
detector's identity only.
"""

from piilab.corpus_mask.batch import MaskBatch, detector_identity
from piilab.corpus_mask.engines import Results, check_address, start_ray
from piilab.corpus_mask.layout import (
    DEFAULT_ROWS_PER_FILE,
    ENGINES,
    FORMAT_VERSION,
    MANIFEST,
    MAPPINGS_DIR,
    MASKED_DIR,
    PARQUET_OPTIONS,
    CorpusError,
)
from piilab.corpus_mask.publish import CorpusResult, mask_corpus
from piilab.corpus_mask.read import MAX_DEPTH, MAX_LINE_BYTES, check_storable, read_corpus
from piilab.corpus_mask.verify import VerifyReport, read_manifest, verify_corpus

__all__ = [
    "DEFAULT_ROWS_PER_FILE",
    "ENGINES",
    "FORMAT_VERSION",
    "MANIFEST",
    "MAPPINGS_DIR",
    "MASKED_DIR",
    "MAX_DEPTH",
    "MAX_LINE_BYTES",
    "PARQUET_OPTIONS",
    "CorpusError",
    "CorpusResult",
    "MaskBatch",
    "Results",
    "VerifyReport",
    "check_address",
    "check_storable",
    "detector_identity",
    "mask_corpus",
    "read_corpus",
    "read_manifest",
    "start_ray",
    "verify_corpus",
]
