# skill: pattern-recognition
# setting: games
# hint: Tally how many times each number shows up in the log and pick the one with the biggest tally.
import random

def most_common_number():
    return random.randint(1, 10)

def step(action):
    if action == 'pick' and len(action.split(',')) == 2:
        if action.split(',')[0] == 1:
            return action.split(',')[1]
        elif action.split(',')[-1] == 1:
            return action.split(',')[0]
        else:
            return 'No answer found.'
    elif action == 'pick' and action.split(',')[0] == 1:
        return action.split(',')[1]
    elif action == 'pick' and action.split(',')[1] == 1:
        return action.split(',')[2]
    else:
        return 'No answer found.'
    return 'No answer found.'

def solve(observations):
    return most_common_number() + [random.randint(1, 10) for _ in range(2)]

# Example of game
def game():
    actions = ['pick', 'pick', 'pick', 'pick', 'pick', 'pick']
    results = solve(actions)
    print(f"Your answer is {results[0] == 'No answer found.'} ({results[1] == 'No answer found.'}))

game()
