"""The Markdown layer of the plan file: blocks and their spans (blocks), the simple sections
(sections), the ``### Word id:`` records (records) and their field tables (kinds), the
person's text kept for rendering (layout), and the reader and writer built on them.
How each value is spelled inside a field is not here: see ``maestro.state.codecs``."""
