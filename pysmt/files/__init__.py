"""Files and their formats: text read and written safely (``textio``: compressed inputs, atomic outputs, damage
named by file and line), where a command may write (``outputs``), Moses' n-best and alignment lines
(``formats``), arrays kept between runs (``array_files``). Everything above reads and writes through here."""
