"""The DVC pipeline's stages, one module each (dvc.yaml; like DVC's own
``repo/<operation>.py``): ``ingest``, ``compare``, ``superseded``, ``audit``
and ``report``. A stage reads its inputs, calls the analyses, which return
values, and writes its outputs; the output package only renders, and the
stage's command in :mod:`pipeline.cli` parses options and calls the stage.
"""
