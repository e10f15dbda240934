"""The offline HTML report and the machine-readable numbers (:mod:`.document`), with the chart
builders it shares with the app (:mod:`.charts`). No Streamlit here: the command line and the
app both use it."""
