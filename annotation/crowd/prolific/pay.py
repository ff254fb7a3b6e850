"""Prolific's pay rule in numbers (no Django, no HTTP): at least £6 / $8 an hour at the median time.

Prolific pays a study in its workspace's currency, GBP or USD, and takes the reward in that
currency's minor unit (pence or cents): the same 100 is £1.00 in one workspace and $1.00 in another.
"""

import math

HOURLY_FLOOR_CENTS = {"GBP": 600, "USD": 800}
SYMBOLS = {"GBP": "£", "USD": "$"}
MINOR_UNITS = {"GBP": "pence", "USD": "cents"}


def money(cents, currency):
    return f"{SYMBOLS.get(currency, currency + ' ')}{cents / 100:.2f}"


def hourly_cents(reward_cents, minutes):
    return reward_cents * 60 / minutes


def top_up_cents(reward_cents, minutes, currency):
    """The bonus per participant that brings `reward_cents` for `minutes` up to the hourly floor (0 if none)."""
    floor = HOURLY_FLOOR_CENTS[currency]
    return max(0, math.ceil(floor * minutes / 60) - reward_cents)


def min_reward_cents(minutes, currency):
    """The least reward Prolific accepts for `minutes` at the median, in the currency's minor unit."""
    return top_up_cents(0, minutes, currency)


def currency_problem(reward_cents, minutes, *, set_in, paid_in):
    """Why a reward set in one currency cannot be sent to a workspace paying in another; "" when they agree."""
    if set_in == paid_in:
        return ""
    if paid_in not in HOURLY_FLOOR_CENTS:
        return f"Your Prolific workspace pays in {paid_in}; RateLab knows Prolific's floor only in GBP and USD."
    under = floor_problem(reward_cents, minutes, paid_in)
    return (
        f"Your Prolific workspace pays in {paid_in}, but this study's reward is set in {set_in}: Prolific would "
        f"pay {money(reward_cents, paid_in)} per participant, not {money(reward_cents, set_in)}."
        + (f" {under}" if under else "")
        + f" Choose {paid_in} and a reward in {paid_in} on the survey's Prolific page, then publish again."
    )


def floor_problem(reward_cents, minutes, currency, *, measured=False):
    """Why this reward is under Prolific's hourly floor, with the figures; "" when it is not."""
    if minutes <= 0:
        return "The estimated completion time must be at least 1 minute."
    if currency not in HOURLY_FLOOR_CENTS:
        return f"Unknown currency {currency!r}: use GBP or USD."
    rate = hourly_cents(reward_cents, minutes)
    floor = HOURLY_FLOOR_CENTS[currency]
    if rate >= floor:
        return ""
    which = "the measured median" if measured else "the estimated median"
    return (
        f"A reward of {money(reward_cents, currency)} for {minutes} minutes ({which}) pays "
        f"{money(round(rate), currency)} an hour, under Prolific's floor of {money(floor, currency)} an hour; "
        f"pay at least {money(reward_cents + top_up_cents(reward_cents, minutes, currency), currency)}"
        f" (a top-up of {money(top_up_cents(reward_cents, minutes, currency), currency)} per participant)."
    )
