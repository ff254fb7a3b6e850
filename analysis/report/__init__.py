"""The shared core of a report that every section builds on: its inputs (the aligned vectors), its
population (which answers it describes), how a cell and a table are written on the page, the LaTeX
pieces the exports share, its cache key, links to it and its plots. Nothing here knows a section."""
