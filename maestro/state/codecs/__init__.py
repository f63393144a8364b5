"""How each field value of the plan file is written and read back: the scalar spellings
(values: ints, money, times, lists), one codec class per way a bullet field is written
(fields) and the codecs for values written as a nested list (nested)."""
