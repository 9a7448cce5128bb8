# skill: mathematical-reasoning
# setting: games
# hint: Run the lines from top to bottom and update the value of x after each line before reading the print.
import random

def solve(observations):
    # The first line is the comments `# skill: mathematical-reasoning` and `# setting: games`, then `# hint: ` followed by one or two sentences of strategy that help a player win without giving the answer; then `# set: ` followed by a list of the first line of the solution.
    # The second line is a list of the first line of the solution and the value of x.
    # The third line is a list of the first line of the solution and the value of x.
    # The fourth line is a list of the first line of the solution and the value of x.
    # The fifth line is a list of the first line of the solution and the value of x.
    # The sixth line is a list of the first line of the solution and the value of x.
    # The seventh line is a list of the first line of the solution and the value of x.

def step(self, action):
    # The first line is the comments `# skill: mathematical-reasoning` and `# setting: games`, then `# hint: ` followed by one or two sentences of strategy that help a player win without giving the answer; then `# step: ` followed by a list of the first line of the solution.
    # The second line is a list of the first line of the solution and the value of x.
    # The third line is a list of the first line of the solution and the value of x.
    # The fourth line is a list of the first line of the solution and the value of x.
    # The fifth line is a list of the first line of the solution and the value of x.
    # The sixth line is a list of the first line of the solution and the value of x.
    # The seventh line is a list of the first line of the solution and the value of x.

def print_observation(observation):
    # The first line is the comments `# skill: math` and `# setting: games`, then `# hint: ` followed by one or two sentences of strategy that help a player win without giving the answer; then `# step: ` followed by a list of the first line of the solution.
    # The second line is a list of the first line of the solution and the value of x.
    # The third line is a list of the first line of the solution and the value of x.
    # The fourth line is a list of the first line of the solution and the value of x.
    # The fifth line is a list of the first line of the solution and the value of x.
    # The sixth line is a list of the first line of the solution and the value of x.
    # The seventh line is a list of the first line of the solution and the value of x.

def print_observation_error(observation):
    # The first line is the comments `# skill: math` and `# setting: games`, then `# hint: ` followed by one or two sentences of strategy that help a player win without giving the answer; then `# step: ` followed by a list of the first line of the solution.
    # The second line is a list of the first line of the solution and the value of x.
    # The third line is a list of the first line of the solution and the value of x.
    # The fourth line is a list of the first line of the solution and the value of x.
    # The fifth line is a list of the first line of the solution and the value of x.
    # The sixth line is a list of the first line of the solution and the value of x.
    # The seventh line is a list of the first line of the solution and the value of x.

def print_observation_error_error(observation):
    # The first line is the comments `# skill: math` and `# setting: games`, then `# hint: ` followed by one or two sentences of strategy that help a player win without giving the answer; then `# step: ` followed by a list of the first line of the solution.
    # The second line is a list of the first line of the solution and the value of x.
    # The third line is a list of the first line of the solution and the value of x.
    # The fourth line is a list of the first line of the solution and the value of x.
    # The fifth line is a list of the first line of the solution and the value of x.
    # The sixth line is a list of the first line of the solution and the value of x.
    # The seventh line is a list of the first line of the solution and the value of x
