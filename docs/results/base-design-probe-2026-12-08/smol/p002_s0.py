# skill: pattern-recognition
# setting: games
# hint: Tally how many times each number shows up in the log and put the one with the largest tally on the right.
def max_tally(numbers):
    max_sum = 0
    for num in numbers:
        max_sum = max(max_sum, max(num))
    return max_sum

def max_tally_with_tail(numbers):
    max_sum = max_tally(numbers)
    return max_tally_with_tail(max_tally_with_tail(numbers))

def max_tally_with_tail(numbers):
    max_sum = max_tally(numbers)
    return max_tally_with_tail(max_tally_with_tail(numbers))

def max_tally_with_tail_with_tail(numbers):
    max_sum = max_tally_with_tail(numbers)
    return max_tally_with_tail_with_tail(max_tally_with_tail(numbers))
def max_tally_with_tail():
    max_tally = max_tally_with_tail_with_tail(max_tally)
    return max_tally_with_tail_with_tail(max_tally)
