"""How the app names a setting that a message asks the user to change: the library's messages
mark settings (``metrics_core.errors.setting``), and each interface says them in its own words;
these are the app's, pointing at the choice on its pages (the command line's flags and the API's
arguments stay in the library)."""

from __future__ import annotations

SETTING_WORDS: dict[str, str] = {
    "user_column": "the 'User column' choice on the Data page",
    "item_column": "the 'Item column' choice on the Data page",
    "rank_column": "the 'Rank column' choice on the Data page",
    "score_column": "the 'Score column' choice on the Data page",
    "relevance_column": "the 'Relevance grade' choice on the Data page",
    "threshold": "the 'Relevant when the grade is at least' box on the Data page",
    "feature_columns": "the 'Item feature columns' choice on the Data page",
    "primitive_model": "the 'Primitive model' choice under Metric options",
    "embedding_column": "an embedding column (the command line's --embedding-column)",
    "category_column": "a category column (the command line's --category-column; the app takes the item "
                          "table's first text column whose values repeat)",
}
