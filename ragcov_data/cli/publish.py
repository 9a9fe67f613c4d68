"""``ragcov publish``: write a benchmark as parquet + dataset card + manifest, loadable offline.

    ragcov publish out/aneel --data-dir ../shared/data --config chunks-100 --config chunks-400
    ragcov publish out/juristcu --dataset juristcu --data-dir ../shared/data
"""
from __future__ import annotations

import argparse

from ragcov_data.tasks.load import load_dataset
from ragcov_data.tasks.paths import check_writable
from ragcov_data.tasks.publish import publish
from ragcov_data.tasks.registry import builder_class, list_datasets


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "publish",
        help="write a benchmark as parquet + dataset card (datasets.load_dataset(folder, 'queries') works)",
        description="Build the benchmark's configs and write them into OUT as parquet files, a README.md dataset "
                    "card with a YAML configs block, and manifest.json.",
    )
    p.add_argument("out", metavar="OUT", help="folder to write (configs already there are kept)")
    p.add_argument("--dataset", default="aneel_taesa", choices=list_datasets(), help="benchmark (default: aneel_taesa)")
    p.add_argument("--config", action="append", metavar="NAME",
                   help="builder config, repeatable (default: the builder's default config)")
    p.add_argument("--all-configs", action="store_true", help="publish every predefined config")
    p.add_argument("--data-dir", help="data folder (default: $RAGCOV_DATA_DIR)")
    p.add_argument("--data-files", nargs="+", metavar="PATH", help="acervo files/folders (aneel_taesa)")
    p.add_argument("--chunk-words", type=int, help="custom chunk size (aneel_taesa)")
    p.add_argument("--query-words", type=int, help="custom query length (aneel_taesa)")
    p.add_argument("--chunking", choices=("words", "dispositivo"), help="custom chunking (aneel_taesa)")
    p.add_argument("--min-words", type=int, help="--chunking dispositivo: custom minimum unit (aneel_taesa)")
    p.add_argument("--max-words", type=int, help="--chunking dispositivo: custom maximum unit (aneel_taesa)")
    p.add_argument("--card", help="dataset card to use instead of the builder's")
    p.add_argument("--cache-dir", help="datasets cache folder")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    check_writable(args.out, folder=True)  # before any build
    cls = builder_class(args.dataset)
    configs: list[str | None] = list(args.config or [])
    if args.all_configs:
        configs = [c.name for c in cls.BUILDER_CONFIGS]
    if not configs:
        configs = [None]
    extra = {k: v for k, v in (("data_dir", args.data_dir), ("data_files", args.data_files),
                                ("chunk_words", args.chunk_words), ("query_words", args.query_words),
                                ("chunking", args.chunking), ("min_words", args.min_words),
                                ("max_words", args.max_words))
             if v is not None}
    for config in configs:
        ds = load_dataset(args.dataset, config, cache_dir=args.cache_dir, **extra)
        publish(ds, args.out, card=args.card)
        name = ds["corpus"].info.config_name
        print(f"{args.dataset}/{name}: corpus {ds.num_rows['corpus']:,}, queries {ds.num_rows['queries']:,}, "
              f"qrels {ds.num_rows['qrels']:,} -> {args.out}")
    print(f"load offline: datasets.load_dataset({args.out!r}, 'queries')")
    return 0
