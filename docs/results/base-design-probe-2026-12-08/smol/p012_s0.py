# skill: logical-deduction
# setting: games
# hint: Two numbers whose sum is divisible by 2 share the same parity and otherwise their parities differ, so walk the chain of sums from the number you already know.
import random

class ParityCluesEnv:
    NAMES = ["a", "b", "c", "d", "e"]
    MAX_TRIES = 10
    MAX_TRIES = 10
    MAX_TRIES = 10

    def __init__(self):
        self.reset()
        self.options = set()
        self.options.update({
            "two_numbers": random.randint(2, 10),
        })
        self.choices = {
            "two_numbers": random.randint(2, 10),
        }
        self.choices.update({
            "two_numbers_by_two": random.randint(2, 10),
        })
        self.choices.update({
            "two_numbers_by_two_by_two": random.randint(2, 10),
        })
        self.choices.update({
            "two_numbers_by_two_by_two": random.randint(2, 10),
        })

    def step(self, action):
        if action == "two_numbers":
            if len(self.choices) == 2:
                if action == "two_numbers_by_two":
                    return action == "two_numbers_by_two_by_two"
                elif action == "two_numbers_by_two_by_two":
                    return action == "two_numbers_by_two_by_two"
                else:
                    return action == "two_numbers_by_two_by_two"
            elif action == "two_numbers_by_two_by_two":
                return action == "two_numbers_by_two_by_two"
            else:
                return action == "two_numbers_by_two_by_two"
        }
        elif action == "two_numbers_by_two":
            return action == "two_numbers_by_two_by_two"
        elif action == "two_numbers_by_two_by_two":
            return action == "two_numbers_by_two_by_two"
        else:
            return action == "two_numbers_by_two_by_two"

    def step_two_numbers(self, action):
        if action == "two_numbers":
            return action == "two_numbers_by_two_by_two"
        elif action == "two_numbers_by_two_by_two":
            return action == "two_numbers_by_two_by_two"
        else:
            return action == "two_numbers_by_two_by_two"

class Daniell_env:
    MAX_TRIES = 10
    MAX_TRIES = 10

    def __init__(self):
        self.reset()
        self.options = set()
        self.options.update({
            "two_numbers": random.randint(2, 10),
        })
        self.choices.update({
            "two_numbers": random.randint(2, 10),
        })
        self.choices.update({
            "two_numbers_by_two": random.randint(2, 10),
        })
        self.choices.update({
            "two_numbers_by_two_by_two": random.randint(2, 10),
        })
        self.choices.update({
            "two_numbers_by_two_by_two": random.randint(2, 10),
        })
        self.choices.update({
            "two_numbers_by_two_by_two": random.randint(2, 10),
        })
        self.choices.update({
            "two_numbers_by_two_by_two": random.randint(2, 10),
        })
        self.choices.update({
            "two_numbers_by_two_by_two": random.randint(2, 10),
        })
        self.choices.update({
            "two_numbers_by_two_by_two": random.randint(2, 10),
        })
        self.choices.update({
            "two_numbers_by_two_by_two": random.randint(2, 10),
        })
        self.choices.update({
            "two_numbers_by_two_by_two": random.randint(2, 10),
        })
        self.choices.update({
            "two_numbers_by_two_by_two": random.randint(2, 10
