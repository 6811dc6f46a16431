"""The course wing: what the book's chapters need besides the library itself.

The reference implementation (generator, parsing, matching, masking, evaluation, splits,
training) lives in `piilab` and never imports this package (a test checks it). Here:

- `lang`: the language of the running notebook, the repository root, quiz files;
- `links`: the course's address (`_config.yml`) and Colab links;
- `ch01`, `diagram`: chapter 01's pipeline as data and its SVG drawing;
- `quiz`: loading, validating and showing the quizzes of `book/quizzes/<lang>/`;
- `exercises`: the exercise checkers, one module per chapter, with their messages in one data
  file per language (`exercises/messages/<lang>.json`);
- `plots`, `plots_splits`: the figures of chapters 02, 04 and 05 (matplotlib, CJK font);
- `results`: reading the committed runs of `results/runs.jsonl` (chapter 07).
"""
