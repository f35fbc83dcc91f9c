"""The attribute names an UpdateExpression uses, parsed once per expression by moto's request checks.

Before it applies an UpdateItem or a TransactWriteItems, moto's response layer parses every
``UpdateExpression`` with its tokenizer and recursive parser only to list the ``#name`` and
``:value`` placeholders it uses (so that an unused ``ExpressionAttributeNames`` entry is refused, as
DynamoDB refuses it:
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ExpressionAttributeNames.html).
About 0.9 ms for the expression of a status change here, paid again for each of the 99 updates of
a transaction although they all carry the same expression text with other values: an operator's
cancel of 7,200 emails parses one expression 7,200 times.

The parse depends on the expression text alone and the response layer only reads the tree it returns
(``find_clauses``), so here that layer's parser remembers the trees of the expressions it has parsed
(the last 4,096): the same placeholders are found and the same expressions refused, since an
expression that fails to parse raises every time (a failure is never remembered). The backend's
own parse, whose tree the validator then changes, is moto's, unchanged.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

_REMEMBERED = 4096
_PATCHED = "__outreach_remembered_update_parse__"


def remember_update_expression_parses() -> None:
    """Make moto's DynamoDB response layer parse each UpdateExpression text once (idempotent)."""
    # moto's response layer imports the parser without exporting it: both are reached as modules.
    responses: Any = importlib.import_module("moto.dynamodb.responses")
    parsing: Any = importlib.import_module("moto.dynamodb.parsing.expressions")
    UpdateExpressionParser = parsing.UpdateExpressionParser

    if getattr(responses.UpdateExpressionParser, _PATCHED, False):
        return

    @functools.lru_cache(maxsize=_REMEMBERED)
    def parsed(expression: str) -> Any:
        return UpdateExpressionParser.make(expression)

    class RememberingParser(UpdateExpressionParser):  # type: ignore[misc,valid-type]
        """moto's parser, whose ``make`` returns the tree of an expression parsed before."""

        @classmethod
        def make(cls, expression_str: str) -> Any:
            return parsed(expression_str)

    setattr(RememberingParser, _PATCHED, True)
    responses.UpdateExpressionParser = RememberingParser
