"""The image domains of Tailor-PACS and what each looks like in words.

One definition for the trainer (the catalogue an artifact records) and the service (the request
resolver matches a request's style words, "charcoal drawings", to these descriptions; artifacts
written before catalogues carried ``domain_descriptions`` fall back to them).
"""

from __future__ import annotations

DOMAINS = ("photo", "art_painting", "cartoon", "sketch")
DOMAIN_DESCRIPTIONS = {
    "photo": "photographs and snapshots taken with a camera, real life pictures",
    "art_painting": "paintings and artworks: oil paintings, watercolours, painted on canvas",
    "cartoon": "cartoons, comics, comic strips, clipart, picture book illustrations and "
               "animated drawings",
    "sketch": "sketches: pencil, charcoal and line drawings, doodles",
}
