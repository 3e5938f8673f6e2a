"""The person's question read once into a typed value: the labels (kinds), the words' reading
(words), the value and its helpers (question), the model's choice of labels (classify)."""
