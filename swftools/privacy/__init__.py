"""Privacy: keyed pseudonyms and the leak audit of published outputs.

Modules: ``pseudonyms`` (``anonymize``, keys, the mapping file), ``audit`` (``audit`` and its
report), ``scan`` (the file kinds an audit looks into), ``match`` (the matching policy) and
``kanon`` (the k-anonymity / re-identification report).
"""
