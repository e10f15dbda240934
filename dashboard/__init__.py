"""rankscope Streamlit app (entry: dashboard/app.py)."""
