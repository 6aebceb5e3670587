"""Write the trained TAPER model to the model store (``model_store.taper.save_taper``)."""

from __future__ import annotations

import json

from trainer.taper.evaluate import Method
from trainer.taper.run import Env

ARTIFACT_TEXT_KEYS = ("prompts", "names", "domain_prompts", "definitions")


def artifact_metrics(summary: dict, first_results: dict) -> dict:
    """Metrics the service reads: test accuracies (mean over seeds) and the val-chosen default.

    ``default_method`` is decided on the *val* tasks of the saved seed (never on test), so the
    service only defaults to TAPER when it measured better than classifier selection.
    """
    main = summary.get("main", {})
    val = first_results.get("val", {})
    default = "taper" if val.get("taper", 0.0) > val.get("selection", 0.0) else "selection"
    return {
        "taper": {"acc": main.get("taper", {}).get("mean"), "val_acc": val.get("taper")},
        "selection": {"acc": main.get("selection", {}).get("mean"),
                      "val_acc": val.get("selection")},
        "default_method": default,
        "error_ratio": summary.get("ratio", {}).get("mean"),
        "k": summary.get("k"),
        "seeds": summary.get("seeds"),
    }


def save_artifact(store: str, env: Env, methods: dict[str, Method], summary: dict,
                  first_results: dict):
    """Save seed-0 TAPER (BN-recalibrated bases + mixer), its generic baseline and a domain
    head on the generic model's features (when the data has two or more domains)."""
    from model_store.taper import save_taper
    from trainer.data.catalogue import catalogue_json
    from trainer.taper.domain_head import fit_domain_head

    taper = methods["taper"]
    generic = methods["selection"].bases.state(0)
    mixer = taper.router.mixer
    names = [c["name"] for c in env.catalogue]
    metrics = artifact_metrics(summary, first_results)
    head = None
    if len(env.domains) >= 2:
        head, metrics["domain_head"] = fit_domain_head(generic, env.cfg.width, env.train, env.val,
                                                    len(env.domains))
        print(json.dumps({"domain_head": metrics["domain_head"]}), flush=True)
    return save_taper(
        store,
        bases=taper.bases.stacked_state(),
        generic=generic,
        mixer_state=mixer.state_dict(),
        mixer_cfg=mixer.config,
        catalogue=env.catalogue_doc or catalogue_json(names),
        class_text={k: env.class_text[k] for k in ARTIFACT_TEXT_KEYS},
        config={"width": env.cfg.width, "k": env.cfg.k, "image_size": env.cfg.image_size},
        metrics=metrics,
        domain_head=head,
        metadata={"training": env.cfg.to_json(), "dataset_fingerprint": env.fingerprint},
    )
