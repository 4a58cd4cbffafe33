"""The ``export`` command of ``python -m sklearn_ltr``."""

from . import FORMATS, export_model

_EPILOG = """\
Formats (see the user guide "Serving and explaining a ranker"):
  lightgbm       LightGBM model text: lightgbm.Booster(model_file=OUT)
  lightgbm-json  LightGBM's dump_model() JSON, as Vespa imports it
                 (--option comparison='<=' for LightGBM's own rule)
  xgboost        XGBoost JSON model: xgboost.Booster(model_file=OUT)
  xgboost-dump   Elasticsearch/OpenSearch LTR plugin, model/xgboost+json
  ranklib        RankLib ensemble text, LTR plugin model/ranklib
  solr           Solr MultipleAdditiveTreesModel JSON (--option name=NAME)
  onnx           ONNX, ai.onnx.ml tree ensemble, float32 input "X"
Formats without missing values (ranklib, solr) refuse a model that learned where
missing values go unless --option missing_as=VALUE names the value the engine
sends for a missing feature. The exported model gives the raw score (predict);
a CalibratedRanker's probability is its sigmoid, applied in the engine.
"""


def add_export_command(commands, formatter_class, parse_param):
    """Register ``export`` on the CLI's subparsers."""
    p = commands.add_parser(
        "export", help="write a saved model in a serving engine's format",
        epilog=_EPILOG, formatter_class=formatter_class,
        description="Export a saved model to LightGBM, XGBoost, ONNX, the LTR plugins or Solr.",
    )
    p.add_argument("model", metavar="MODEL", help="model file written by fit or save_model")
    p.add_argument("--format", required=True, choices=FORMATS, metavar="FORMAT",
                   help=f"one of: {', '.join(FORMATS)}")
    p.add_argument("-o", "--output", metavar="OUT", required=True, help="file to write")
    p.add_argument("--feature-names", metavar="FILE",
                   help="feature names to write, one per line in column order (default: "
                   "the names seen in fit, else f0, f1, ...)")
    p.add_argument("--option", action="append", metavar="KEY=VALUE", default=[],
                   help="an option of the format, e.g. missing_as=0; repeatable")
    p.set_defaults(func=lambda args: export(args, parse_param))


def export(args, parse_param):
    """Read a saved model and write it in the requested format."""
    from ..persistence import load_model

    model = load_model(args.model)
    if hasattr(model, "steps"):
        raise ValueError(
            f"{args.model} holds a Pipeline ({' -> '.join(name for name, _ in model.steps)}); "
            "a serving engine runs only the ranker, so exporting it alone would drop the "
            "other steps. Save the ranker on its own (save_model(pipeline[-1], path)) once "
            "the engine computes the features as the pipeline's steps do, and export that."
        )
    names = None
    if args.feature_names:
        with open(args.feature_names, encoding="utf-8") as fh:
            names = [line.strip() for line in fh if line.strip()]
    options = dict(parse_param(text) for text in args.option)
    export_model(model, args.output, args.format, feature_names=names, **options)
    print(f"wrote {args.output} ({args.format}): {type(model).__name__}, {model.n_iter_} trees, "
          f"{model.n_features_in_} features")
