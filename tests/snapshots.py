"""Snapshot formats: one readable file per snapshot, named by what it holds (STYLE: snapshots
stored as readable files). The fixtures that use them are in tests/conftest.py."""

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


class TextSnapshot(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "txt"


class MarkdownSnapshot(TextSnapshot):
    file_extension = "md"


class XmlSnapshot(TextSnapshot):
    file_extension = "xml"
