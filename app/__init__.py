"""Abstract Atlas app helpers: pure state, filter, selection and figure code the Streamlit entry point composes."""
