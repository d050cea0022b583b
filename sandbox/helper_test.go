package sandbox

const helperRoleEnv = "TENDER_SANDBOX_TEST_HELPER"

func runHelper(role string) int { return 2 }
