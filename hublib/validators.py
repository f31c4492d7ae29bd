"""marshmallow's validators as the hub uses them: the same classes with Russian messages.

Like ``hublib.fields``: subclasses, so that marshmallow's own validators keep their messages for
any other library in the process (STYLE 16).
"""
from __future__ import annotations

from marshmallow import validate


class Range(validate.Range):
    # {min_op}/{max_op} are filled from the message_g*/message_l* words when the validator is made
    message_min = 'должно быть {min_op} {{min}}'
    message_max = 'должно быть {max_op} {{max}}'
    message_all = 'должно быть {min_op} {{min}} и {max_op} {{max}}'
    message_gte = 'не меньше'
    message_gt = 'больше'
    message_lte = 'не больше'
    message_lt = 'меньше'


class Length(validate.Length):
    message_min = 'длина меньше {min}'
    message_max = 'длина больше {max}'
    message_all = 'длина должна быть от {min} до {max}'
    message_equal = 'длина должна быть {equal}'


class OneOf(validate.OneOf):
    default_message = 'ожидается одно из: {choices}'


class Regexp(validate.Regexp):
    default_message = 'строка не подходит под шаблон'


__all__ = ['Range', 'Length', 'OneOf', 'Regexp']
