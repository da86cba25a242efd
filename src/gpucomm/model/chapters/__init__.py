"""The numbers each chapter of the course quotes, one module per chapter (``scale_out.py`` for ``book/scale_out.md``).

A chapter's hidden cell glues what its module's ``numbers()`` returns (a dict: glue key -> value, in the units the
page prints) and shows, in short visible cells, the few calls behind its headline numbers. Every comparative
sentence of a chapter is either worded by :mod:`gpucomm.model.claims` (``change_phrase``, ``compare_word``) or
stated with ``claims.require`` inside ``numbers()``, so a model change that contradicts the prose raises
:class:`~gpucomm.model.claims.ClaimError` and the book build fails. The modules only call the model: every formula
and parameter stays in :mod:`gpucomm.model.cost`, the catalog and the calibration.
"""
