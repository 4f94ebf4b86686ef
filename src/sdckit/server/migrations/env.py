"""Alembic environment of the analysis service's database (run by :meth:`Store.migrate`).

The store passes its open connection in ``config.attributes["connection"]``;
run from the ``alembic`` command line instead, the URL comes from
``sqlalchemy.url`` in the Alembic config.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context

config = context.config


def _run(connection: sa.Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=None,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    url = config.get_main_option("sqlalchemy.url")
    if url is None:
        raise RuntimeError("the migration config names no sqlalchemy.url and no connection")
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        _run(conn)
    engine.dispose()
