"""The table and its components: the live machine, its assembly, the roles each component is given,
wagering, dealing, deciding, settling, the floor, faults, the link's table side, start-up
recovery, the progressive's records."""
