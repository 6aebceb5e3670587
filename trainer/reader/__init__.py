"""Training the request reader: a text encoder fine-tuned on labelled task descriptions
(``model_store.request_model``), which the service reads beside its rules
(``service.kinds.tuned``)."""
