# skill: optimisation
# setting: games
# hint: Use as many of the large coin as fit without going over, then make up the rest with ones.
import random

def fewestCoinsEnv():
    MAX_TRIES = 3
    max_attempts = 10
    max_reward = 1
    max_reward_attempt = 1
    max_reward_attempt_attempt = max_attempts - max_attempts_attempt_attempt_attempt
    max_reward_attempt_attempt_attempt = max_attempt_attempt - max_attempt_attempt_attempt_attempt
    max_reward_attempt_attempt_attempt = max_attempt_attempt - max_attempt_attempt_attempt_attempt
    return max_reward_attempt_attempt_attempt, max_reward_attempt_attempt

class FewestCoinsEnv:
    def __init__(self, max_reward_attempt_attempt_attempt=0):
        self.max_reward_attempt_attempt = max_reward_attempt_attempt_attempt
        self.max_reward_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max_reward_attempt_attempt_attempt = self.max_reward_attempt_attempt
        self.max
