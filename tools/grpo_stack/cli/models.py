"""placeholder"""
def main(argv=None):
    return 2
