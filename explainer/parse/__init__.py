"""The first stage: any paste into the plain model (:class:`explainer.model.Parsed`)."""
