"""Word overlap with each class's texts, added to the encoder's similarity for descriptions.

A sentence encoder sums a description into one vector, so the words that set one class apart
can drown in the words around them: "casual top with short sleeves and a round neck, worn in
summer" was 0.671 from a t-shirt and 0.616 from a coat, too close to answer. Word overlap
weighted by rarity across the catalogue (tf-idf: "sleeves" belongs to few classes, "worn" to
many) gives that evidence back (0.715 and 0.629). Dense and sparse scores are summed, the
usual hybrid of retrieval systems; scikit-learn's vectoriser (English stop words, sublinear
term counts) does the counting. Only mentions that *describe* a class get the sum (a name is
matched exactly or by the encoder alone), and not a count known to be no digit ("the number
of months in a year", 12), which is asked back. On the tuning pool it answered 28 more
definition rows right for one more out-of-catalogue row at 200, with the described threshold
0.025 higher (docs/results-resolution.md, stop 29).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

# weight of the tf-idf cosine next to the encoder's cosine (tuning pool: 0.1 kept the share of
# out-of-catalogue definition rows answered 200 where it was; 0.2 raised it from 12.5 to 15 %)
LEXICAL_WEIGHT = 0.1


class Lexical:
    """tf-idf cosine between a phrase and each class's texts (name, aliases, definition,
    descriptions), one document per class."""

    def __init__(self, classes: list[dict[str, Any]], weight: float = LEXICAL_WEIGHT) -> None:
        docs = [" ".join([c["name"], *c.get("aliases", []), c.get("definition") or "",
                          *c.get("descriptions", [])]) for c in classes]  # fmt: skip
        self.weight, self._classes = weight, len(classes)
        self._vectoriser = TfidfVectorizer(stop_words="english", sublinear_tf=True)
        try:
            self._docs = self._vectoriser.fit_transform(docs)
        except ValueError:  # nothing but stop words in the catalogue: no lexical evidence
            self._docs = None

    def scores(self, phrases: list[str]) -> np.ndarray:
        """(len(phrases), classes): ``weight`` × the tf-idf cosine (rows are L2-normalised)."""
        if self._docs is None or not phrases:
            return np.zeros((len(phrases), self._classes))
        return self.weight * (self._vectoriser.transform(phrases) @ self._docs.T).toarray()
