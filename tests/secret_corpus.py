"""A corpus of secret shapes, and of ordinary log lines, for the redactor's tests and benchmark.

The shapes follow the public rule sets of gitleaks (config/gitleaks.toml: a prefixed token, or a
vendor keyword followed by a value of a given alphabet and length) and Yelp's detect-secrets (its
plugins: AWS, Artifactory, Azure storage, Discord, Mailchimp, Telegram, Twilio, ..., and the keyword
detector's word list, other languages included), plus the shapes of issue 15 (options, URLs with
`@` and `/` in the password, PHP define, XML, redis requirepass, psk, LDAP bindpw, ...). Values are
random per run from a seeded generator: the tests never meet a value written down beforehand.
Client and account *identifiers* in gitleaks' set (numeric `*-client-id` rules) are left out: they
name an account, they do not open it.
"""

from __future__ import annotations

import base64
import random
import string
from dataclasses import dataclass
from typing import Callable

LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM = LOWER + UPPER + DIGITS
LOWNUM = LOWER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"


@dataclass(frozen=True)
class Secret:
    shape: str  # the rule it follows, e.g. "gitleaks:github-pat"
    key: str | None  # the key it is assigned to, None for a bare token found by its shape
    value: str


class Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def uuid(self, upper: bool = False) -> str:
        text = "-".join(self.s(HEX, n) for n in (8, 4, 4, 4, 12))
        return text.upper() if upper else text


# Prefixed tokens (gitleaks rule id, builder). Each is found by its shape, under a neutral key.
PREFIXED: list[tuple[str, Callable[[Gen], str]]] = [
    ("1password-secret-key", lambda g: f"A3-{g.s(UPPER + DIGITS, 6)}-{g.s(UPPER + DIGITS, 11)}-{g.s(UPPER + DIGITS, 5)}-{g.s(UPPER + DIGITS, 5)}-{g.s(UPPER + DIGITS, 5)}"),
    ("1password-service-account-token", lambda g: "ops_eyJ" + g.s(B64, 250)),
    ("adobe-client-secret", lambda g: "p8e-" + g.s(LOWNUM, 32)),
    ("age-secret-key", lambda g: "AGE-SECRET-KEY-1" + g.s("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
    ("airtable-personnal-access-token", lambda g: "pat" + g.s(ALNUM, 14) + "." + g.s(HEX, 64)),
    ("alibaba-access-key-id", lambda g: "LTAI" + g.s(LOWNUM, 20)),
    ("anthropic-admin-api-key", lambda g: "sk-ant-admin01-" + g.s(URLSAFE, 93) + "AA"),
    ("anthropic-api-key", lambda g: "sk-ant-api03-" + g.s(URLSAFE, 93) + "AA"),
    ("artifactory-api-key", lambda g: "AKCp" + g.s(ALNUM, 69)),
    ("artifactory-reference-token", lambda g: "cmVmd" + g.s(ALNUM, 59)),
    ("atlassian-api-token", lambda g: "ATATT3" + g.s(URLSAFE + "=", 186)),
    ("authress-service-client-access-key", lambda g: f"sc_{g.s(LOWNUM, 10)}.{g.s(LOWNUM, 5)}.acc_{g.s(LOWNUM, 20)}.{g.s(B64, 40)}"),
    ("aws-access-token", lambda g: "AKIA" + g.s(UPPER + "234567", 16)),
    ("aws-access-token-asia", lambda g: "ASIA" + g.s(UPPER + "234567", 16)),
    ("aws-amazon-bedrock-api-key-long-lived", lambda g: "ABSK" + g.s(B64, 120)),
    ("aws-amazon-bedrock-api-key-short-lived", lambda g: "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t" + g.s(B64, 60)),
    ("azure-ad-client-secret", lambda g: g.s(ALNUM, 3) + g.s(DIGITS, 1) + "Q~" + g.s(ALNUM + "_~.-", 34)),
    ("clickhouse-cloud-api-secret-key", lambda g: "4b1d" + g.s(ALNUM, 38)),
    ("clojars-api-token", lambda g: "CLOJARS_" + g.s(LOWNUM, 60)),
    ("cloudflare-origin-ca-key", lambda g: f"v1.0-{g.s(HEX, 24)}-{g.s(HEX, 146)}"),
    ("databricks-api-token", lambda g: "dapi" + g.s(HEX, 32)),
    ("digitalocean-access-token", lambda g: "doo_v1_" + g.s(HEX, 64)),
    ("digitalocean-pat", lambda g: "dop_v1_" + g.s(HEX, 64)),
    ("digitalocean-refresh-token", lambda g: "dor_v1_" + g.s(HEX, 64)),
    ("doppler-api-token", lambda g: "dp.pt." + g.s(ALNUM, 43)),
    ("duffel-api-token", lambda g: "duffel_test_" + g.s(URLSAFE + "=", 43)),
    ("dynatrace-api-token", lambda g: f"dt0c01.{g.s(UPPER + DIGITS, 24)}.{g.s(UPPER + DIGITS, 64)}"),
    ("easypost-api-token", lambda g: "EZAK" + g.s(ALNUM, 54)),
    ("easypost-test-api-token", lambda g: "EZTK" + g.s(ALNUM, 54)),
    ("facebook-access-token", lambda g: g.s(DIGITS, 15) + "|" + g.s(URLSAFE, 32)),
    ("facebook-page-access-token", lambda g: "EAAM" + g.s(ALNUM, 110)),
    ("flutterwave-encryption-key", lambda g: "FLWSECK_TEST-" + g.s("abcdefgh0123456789", 12)),
    ("flutterwave-public-key", lambda g: "FLWPUBK_TEST-" + g.s("abcdefgh0123456789", 32) + "-X"),
    ("flutterwave-secret-key", lambda g: "FLWSECK_TEST-" + g.s("abcdefgh0123456789", 32) + "-X"),
    ("flyio-access-token", lambda g: "fo1_" + g.s(URLSAFE, 43)),
    ("flyio-macaroon", lambda g: "fm2_" + g.s(B64, 120)),
    ("frameio-api-token", lambda g: "fio-u-" + g.s(URLSAFE, 64)),
    ("gcp-api-key", lambda g: "AIza" + g.s(URLSAFE, 35)),
    ("github-app-token", lambda g: "ghs_" + g.s(ALNUM, 36)),
    ("github-app-token-user", lambda g: "ghu_" + g.s(ALNUM, 36)),
    ("github-fine-grained-pat", lambda g: "github_pat_" + g.s(ALNUM + "_", 82)),
    ("github-oauth", lambda g: "gho_" + g.s(ALNUM, 36)),
    ("github-pat", lambda g: "ghp_" + g.s(ALNUM, 36)),
    ("github-refresh-token", lambda g: "ghr_" + g.s(ALNUM, 36)),
    ("gitlab-cicd-job-token", lambda g: f"glcbt-{g.s(ALNUM, 2)}_{g.s(URLSAFE, 20)}"),
    ("gitlab-deploy-token", lambda g: "gldt-" + g.s(URLSAFE, 20)),
    ("gitlab-feature-flag-client-token", lambda g: "glffct-" + g.s(URLSAFE, 20)),
    ("gitlab-feed-token", lambda g: "glft-" + g.s(URLSAFE, 20)),
    ("gitlab-incoming-mail-token", lambda g: "glimt-" + g.s(URLSAFE, 25)),
    ("gitlab-kubernetes-agent-token", lambda g: "glagent-" + g.s(URLSAFE, 50)),
    ("gitlab-oauth-app-secret", lambda g: "gloas-" + g.s(URLSAFE, 64)),
    ("gitlab-pat", lambda g: "glpat-" + g.s(URLSAFE, 20)),
    ("gitlab-pat-routable", lambda g: f"glpat-{g.s(URLSAFE, 40)}.{g.s(LOWNUM, 9)}"),
    ("gitlab-ptt", lambda g: "glptt-" + g.s(HEX, 40)),
    ("gitlab-rrt", lambda g: "GR1348941" + g.s(URLSAFE, 20)),
    ("gitlab-runner-authentication-token", lambda g: "glrt-" + g.s(URLSAFE, 20)),
    ("gitlab-scim-token", lambda g: "glsoat-" + g.s(URLSAFE, 20)),
    ("grafana-api-key", lambda g: "eyJrIjoi" + g.s(ALNUM, 80)),
    ("grafana-cloud-api-token", lambda g: "glc_" + g.s(ALNUM + "+/", 40)),
    ("grafana-service-account-token", lambda g: f"glsa_{g.s(ALNUM, 32)}_{g.s(HEX, 8)}"),
    ("harness-api-key", lambda g: f"pat.{g.s(URLSAFE, 22)}.{g.s(ALNUM, 24)}.{g.s(ALNUM, 20)}"),
    ("hashicorp-tf-api-token", lambda g: f"{g.s(LOWNUM, 14)}.atlasv1.{g.s(URLSAFE, 64)}"),
    ("heroku-api-key-v2", lambda g: "HRKU-AA" + g.s(URLSAFE, 58)),
    ("huggingface-access-token", lambda g: "hf_" + g.s(LOWER + UPPER, 34)),
    ("huggingface-organization-api-token", lambda g: "api_org_" + g.s(LOWER + UPPER, 34)),
    ("infracost-api-token", lambda g: "ico-" + g.s(ALNUM, 32)),
    ("intra42-client-secret", lambda g: "s-s4t2ud-" + g.s(HEX, 64)),
    ("jwt", lambda g: "eyJhbGciOiJIUzI1NiJ9.eyJ" + g.s(URLSAFE, 40) + "." + g.s(URLSAFE, 43)),
    ("jwt-base64", lambda g: base64.b64encode(("eyJhbGciOiJIUzI1NiJ9.eyJ" + g.s(URLSAFE, 30) + "." + g.s(URLSAFE, 43)).encode()).decode()),
    ("linear-api-key", lambda g: "lin_api_" + g.s(ALNUM, 40)),
    ("maxmind-license-key", lambda g: f"{g.s(ALNUM, 6)}_{g.s(ALNUM, 29)}_mmk"),
    ("notion-api-token", lambda g: "ntn_" + g.s(DIGITS, 11) + g.s(ALNUM, 35)),
    ("npm-access-token", lambda g: "npm_" + g.s(ALNUM, 36)),
    ("octopus-deploy-api-key", lambda g: "API-" + g.s(UPPER + DIGITS, 26)),
    ("openai-api-key", lambda g: "sk-proj-" + g.s(URLSAFE, 74) + "T3BlbkFJ" + g.s(URLSAFE, 74)),
    ("openai-api-key-legacy", lambda g: "sk-" + g.s(ALNUM, 20) + "T3BlbkFJ" + g.s(ALNUM, 20)),
    ("openshift-user-token", lambda g: "sha256~" + g.s(URLSAFE, 43)),
    ("perplexity-api-key", lambda g: "pplx-" + g.s(ALNUM, 48)),
    ("planetscale-api-token", lambda g: "pscale_tkn_" + g.s(URLSAFE, 43)),
    ("planetscale-oauth-token", lambda g: "pscale_oauth_" + g.s(URLSAFE, 43)),
    ("planetscale-password", lambda g: "pscale_pw_" + g.s(URLSAFE, 43)),
    ("postman-api-token", lambda g: f"PMAK-{g.s(HEX, 24)}-{g.s(HEX, 34)}"),
    ("prefect-api-token", lambda g: "pnu_" + g.s(ALNUM, 36)),
    ("pulumi-api-token", lambda g: "pul-" + g.s(HEX, 40)),
    ("pypi-upload-token", lambda g: "pypi-AgEIcHlwaS5vcmc" + g.s(URLSAFE, 70)),
    ("readme-api-token", lambda g: "rdme_" + g.s(LOWNUM, 70)),
    ("rubygems-api-token", lambda g: "rubygems_" + g.s(HEX, 48)),
    ("scalingo-api-token", lambda g: "tk-us-" + g.s(URLSAFE, 48)),
    ("sendgrid-api-token", lambda g: f"SG.{g.s(URLSAFE, 22)}.{g.s(URLSAFE, 43)}"),
    ("sendinblue-api-token", lambda g: f"xkeysib-{g.s(HEX, 64)}-{g.s(ALNUM, 16)}"),
    ("sentry-org-token", lambda g: f"sntrys_eyJpYXQiO{g.s(B64, 30)}LCJyZWdpb25fdXJs{g.s(B64, 30)}_{g.s(B64, 43)}"),
    ("sentry-user-token", lambda g: "sntryu_" + g.s(HEX, 64)),
    ("settlemint-application-access-token", lambda g: "sm_aat_" + g.s(ALNUM, 16)),
    ("settlemint-personal-access-token", lambda g: "sm_pat_" + g.s(ALNUM, 16)),
    ("settlemint-service-access-token", lambda g: "sm_sat_" + g.s(ALNUM, 16)),
    ("shippo-api-token", lambda g: "shippo_live_" + g.s(HEX, 40)),
    ("shopify-access-token", lambda g: "shpat_" + g.s(HEX, 32)),
    ("shopify-custom-access-token", lambda g: "shpca_" + g.s(HEX, 32)),
    ("shopify-private-app-access-token", lambda g: "shppa_" + g.s(HEX, 32)),
    ("shopify-shared-secret", lambda g: "shpss_" + g.s(HEX, 32)),
    ("slack-app-token", lambda g: f"xapp-1-A{g.s(UPPER + DIGITS, 10)}-{g.s(DIGITS, 13)}-{g.s(LOWNUM, 64)}"),
    ("slack-bot-token", lambda g: f"xoxb-{g.s(DIGITS, 12)}-{g.s(DIGITS, 13)}-{g.s(ALNUM, 24)}"),
    ("slack-config-access-token", lambda g: "xoxe.xoxp-1-" + g.s(UPPER + DIGITS, 164)),
    ("slack-config-refresh-token", lambda g: "xoxe-1-" + g.s(UPPER + DIGITS, 146)),
    ("slack-legacy-token", lambda g: f"xoxs-{g.s(DIGITS, 10)}-{g.s(DIGITS, 10)}-{g.s(DIGITS, 10)}-{g.s(HEX, 64)}"),
    ("slack-legacy-workspace-token", lambda g: "xoxa-2-" + g.s(ALNUM, 40)),
    ("slack-user-token", lambda g: f"xoxp-{g.s(DIGITS, 12)}-{g.s(DIGITS, 12)}-{g.s(DIGITS, 12)}-{g.s(ALNUM, 32)}"),
    ("slack-webhook-url", lambda g: f"https://hooks.slack.com/services/T{g.s(UPPER + DIGITS, 8)}/B{g.s(UPPER + DIGITS, 10)}/{g.s(ALNUM, 24)}"),
    ("sourcegraph-access-token", lambda g: "sgp_" + g.s(HEX, 40)),
    ("square-access-token", lambda g: "sq0atp-" + g.s(URLSAFE, 22)),
    ("square-access-token-eaaa", lambda g: "EAAA" + g.s(URLSAFE, 60)),
    ("stripe-access-token", lambda g: "sk_live_" + g.s(ALNUM, 24)),
    ("stripe-restricted-token", lambda g: "rk_test_" + g.s(ALNUM, 24)),
    ("twilio-api-key", lambda g: "SK" + g.s(HEX, 32)),
    ("typeform-api-token", lambda g: "tfp_" + g.s(URLSAFE + ".=", 59)),
    ("vault-batch-token", lambda g: "hvb." + g.s(URLSAFE, 140)),
    ("vault-service-token", lambda g: "hvs." + g.s(URLSAFE, 95)),
    ("vault-service-token-legacy", lambda g: "s." + g.s(ALNUM, 24)),
    ("yandex-api-key", lambda g: "AQVN" + g.s(URLSAFE, 36)),
    ("mailchimp-api-key", lambda g: g.s(HEX, 32) + "-us" + g.s(DIGITS, 2)),
    ("mailgun-private-api-token", lambda g: "key-" + g.s(HEX, 32)),
    ("mailgun-pub-key", lambda g: "pubkey-" + g.s(HEX, 32)),
    ("telegram-bot-api-token", lambda g: g.s(DIGITS, 10) + ":AA" + g.s(URLSAFE, 33)),
    ("new-relic-user-api-key", lambda g: "NRAK-" + g.s(UPPER + DIGITS, 27)),
    ("new-relic-insert-key", lambda g: "NRII-" + g.s(URLSAFE, 32)),
    ("twitter-bearer-token", lambda g: "A" * 22 + g.s(ALNUM + "%", 90)),
    # detect-secrets plugins
    ("detect-secrets:discord-bot-token", lambda g: f"M{g.s(ALNUM, 24)}.{g.s(URLSAFE, 6)}.{g.s(URLSAFE, 27)}"),
    ("detect-secrets:square-oauth", lambda g: "sq0csp-" + g.s(URLSAFE, 43)),
    ("detect-secrets:azure-storage-key", lambda g: "AccountKey=" + g.s(B64, 86) + "=="),
    ("detect-secrets:aws-secret-access-key-bare", lambda g: g.s(B64, 40)),
    ("detect-secrets:base64-high-entropy", lambda g: g.s(B64, 48) + "=="),
    ("password-hash-sha512crypt", lambda g: f"$6$rounds=5000${g.s(ALNUM, 16)}${g.s(ALNUM + './', 86)}"),
    ("password-hash-bcrypt", lambda g: f"$2b$12${g.s(ALNUM + './', 53)}"),
    ("password-hash-ldap-ssha", lambda g: "{SSHA}" + g.s(B64, 32)),
    ("basic-auth-header-base64", lambda g: base64.b64encode(f"admin:{g.s(ALNUM, 14)}".encode()).decode()),
    ("base64-encoded-assignment", lambda g: base64.b64encode(f"password={g.s(ALNUM, 14)}".encode()).decode()),
]

# gitleaks keyword rules: (rule id, vendor keyword, value builder). The value is found by its key.
KEYWORD_RULES: list[tuple[str, str, Callable[[Gen], str]]] = [
    ("adafruit-api-key", "adafruit", lambda g: g.s(LOWNUM + "_-", 32)),
    ("adobe-client-id", "adobe", lambda g: g.s(HEX, 32)),
    ("airtable-api-key", "airtable", lambda g: g.s(LOWNUM, 17)),
    ("algolia-api-key", "algolia", lambda g: g.s(LOWNUM, 32)),
    ("alibaba-secret-key", "alibaba", lambda g: g.s(LOWNUM, 30)),
    ("asana-client-secret", "asana", lambda g: g.s(LOWNUM, 32)),
    ("atlassian-api-token-kw", "jira", lambda g: g.s(LOWNUM, 20) + g.s(HEX, 4)),
    ("beamer-api-token", "beamer", lambda g: "b_" + g.s(LOWNUM + "=_-", 44)),
    ("bitbucket-client-secret", "bitbucket", lambda g: g.s(LOWNUM + "=_-", 64)),
    ("bittrex-secret-key", "bittrex", lambda g: g.s(LOWNUM, 32)),
    ("cisco-meraki-api-key", "meraki", lambda g: g.s(HEX, 40)),
    ("cloudflare-api-key", "cloudflare", lambda g: g.s(LOWNUM + "_-", 40)),
    ("cloudflare-global-api-key", "cloudflare_global", lambda g: g.s(HEX, 37)),
    ("codecov-access-token", "codecov", lambda g: g.s(LOWNUM, 32)),
    ("cohere-api-token", "cohere", lambda g: g.s(ALNUM, 40)),
    ("coinbase-access-token", "coinbase", lambda g: g.s(LOWNUM + "_-", 64)),
    ("confluent-secret-key", "confluent", lambda g: g.s(LOWNUM, 64)),
    ("contentful-delivery-api-token", "contentful", lambda g: g.s(LOWNUM + "=_-", 43)),
    ("datadog-access-token", "datadog", lambda g: g.s(LOWNUM, 40)),
    ("defined-networking-api-token", "dnkey", lambda g: f"dnkey-{g.s(LOWNUM, 26)}-{g.s(LOWNUM, 52)}"),
    ("discord-api-token", "discord", lambda g: g.s(HEX, 64)),
    ("discord-client-secret", "discord_client", lambda g: g.s(LOWNUM + "=_-", 32)),
    ("droneci-access-token", "droneci", lambda g: g.s(LOWNUM, 32)),
    ("dropbox-api-token", "dropbox", lambda g: g.s(LOWNUM, 15)),
    ("dropbox-long-lived-api-token", "dropbox_long", lambda g: g.s(LOWNUM, 11) + "AAAAAAAAAA" + g.s(LOWNUM + "-_=", 43)),
    ("dropbox-short-lived-api-token", "dropbox_short", lambda g: "sl." + g.s(LOWNUM + "-=_", 135)),
    ("etsy-access-token", "etsy", lambda g: g.s(LOWNUM, 24)),
    ("facebook-secret", "facebook", lambda g: g.s(HEX, 32)),
    ("fastly-api-token", "fastly", lambda g: g.s(LOWNUM + "=_-", 32)),
    ("finicity-api-token", "finicity", lambda g: g.s(HEX, 32)),
    ("finicity-client-secret", "finicity_client", lambda g: g.s(LOWNUM, 20)),
    ("finnhub-access-token", "finnhub", lambda g: g.s(LOWNUM, 20)),
    ("flickr-access-token", "flickr", lambda g: g.s(LOWNUM, 32)),
    ("freemius-secret-key", "freemius", lambda g: "sk_" + g.s(ALNUM + "!#%", 29)),
    ("freshbooks-access-token", "freshbooks", lambda g: g.s(LOWNUM, 64)),
    ("gitter-access-token", "gitter", lambda g: g.s(LOWNUM + "_-", 40)),
    ("gocardless-api-token", "gocardless", lambda g: "live_" + g.s(LOWNUM + "-_=", 40)),
    ("heroku-api-key", "heroku", lambda g: g.uuid()),
    ("hubspot-api-key", "hubspot", lambda g: g.uuid(upper=True)),
    ("intercom-api-key", "intercom", lambda g: g.s(LOWNUM + "=_-", 60)),
    ("jfrog-api-key", "jfrog", lambda g: g.s(LOWNUM, 73)),
    ("jfrog-identity-token", "artifactory", lambda g: g.s(LOWNUM, 64)),
    ("kraken-access-token", "kraken", lambda g: g.s(LOWNUM + "/=_+-", 86)),
    ("kucoin-access-token", "kucoin", lambda g: g.s(HEX, 24)),
    ("kucoin-secret-key", "kucoin_api", lambda g: g.uuid()),
    ("launchdarkly-access-token", "launchdarkly", lambda g: g.s(LOWNUM + "=_-", 40)),
    ("linear-client-secret", "linear", lambda g: g.s(HEX, 32)),
    ("linkedin-client-secret", "linkedin", lambda g: g.s(LOWNUM, 16)),
    ("lob-api-key", "lob", lambda g: "live_" + g.s(HEX, 35)),
    ("lob-pub-api-key", "lob_pub", lambda g: "test_pub_" + g.s(HEX, 31)),
    ("looker-client-secret", "looker", lambda g: g.s(LOWNUM, 24)),
    ("mailgun-signing-key", "mailgun", lambda g: f"{g.s('abcdefgh0123456789', 32)}-{g.s('abcdefgh0123456789', 8)}-{g.s('abcdefgh0123456789', 8)}"),
    ("mapbox-api-token", "mapbox", lambda g: f"pk.{g.s(LOWNUM, 60)}.{g.s(LOWNUM, 22)}"),
    ("mattermost-access-token", "mattermost", lambda g: g.s(LOWNUM, 26)),
    ("messagebird-api-token", "messagebird", lambda g: g.s(LOWNUM, 25)),
    ("netlify-access-token", "netlify", lambda g: g.s(LOWNUM + "=_-", 43)),
    ("new-relic-browser-api-token", "newrelic", lambda g: "NRJS-" + g.s(HEX, 19)),
    ("new-relic-user-api-id", "new_relic", lambda g: g.s(LOWNUM, 64)),
    ("nytimes-access-token", "nytimes", lambda g: g.s(LOWNUM + "=_-", 32)),
    ("okta-access-token", "okta", lambda g: "00" + g.s(URLSAFE + "=", 40)),
    ("plaid-api-token", "plaid", lambda g: f"access-sandbox-{g.uuid()}"),
    ("plaid-secret-key", "plaid_secret", lambda g: g.s(LOWNUM, 30)),
    ("privateai-api-token", "private_ai", lambda g: g.s(LOWNUM, 32)),
    ("rapidapi-access-token", "rapidapi", lambda g: g.s(LOWNUM + "_-", 50)),
    ("sendbird-access-token", "sendbird", lambda g: g.s(HEX, 40)),
    ("sentry-access-token", "sentry", lambda g: g.s(HEX, 64)),
    ("sidekiq-secret", "BUNDLE_ENTERPRISE__CONTRIBSYS__COM", lambda g: f"{g.s(HEX, 8)}:{g.s(HEX, 8)}"),
    ("snyk-api-token", "snyk", lambda g: g.uuid()),
    ("sonar-api-token", "sonar", lambda g: "squ_" + g.s(LOWNUM, 40)),
    ("squarespace-access-token", "squarespace", lambda g: g.uuid()),
    ("sumologic-access-token", "sumo", lambda g: g.s(LOWNUM, 64)),
    ("travisci-access-token", "travis", lambda g: g.s(LOWNUM, 22)),
    ("twitch-api-token", "twitch", lambda g: g.s(LOWNUM, 30)),
    ("twitter-access-secret", "twitter_access", lambda g: g.s(LOWNUM, 45)),
    ("twitter-access-token", "twitter", lambda g: g.s(DIGITS, 19) + "-" + g.s(ALNUM, 30)),
    ("twitter-api-key", "twitter_consumer", lambda g: g.s(LOWNUM, 25)),
    ("twitter-api-secret", "twitter_consumer_secret", lambda g: g.s(LOWNUM, 50)),
    ("yandex-access-token", "yandex", lambda g: f"t1.{g.s(ALNUM + '_-', 20)}.{g.s(ALNUM + '_-', 86)}"),
    ("yandex-aws-access-token", "yandex_aws", lambda g: "YC" + g.s(URLSAFE, 38)),
    ("zendesk-secret-key", "zendesk", lambda g: g.s(LOWNUM, 40)),
]
# Key names that say "secret" in the words of detect-secrets' keyword detector and other languages.
SECRET_KEYS = [
    "password", "passwd", "pwd", "DB_PASSWORD", "PGPASSWORD", "mysql_root_password", "secret", "client_secret",
    "api_key", "apikey", "api-key", "auth_key", "service_key", "account_key", "db_key", "database_key",
    "priv_key", "private_key", "client_key", "db_pass", "database_pass", "key_pass", "secret_key", "access_token",
    "refresh_token", "auth_token", "session_token", "x-api-key", "contraseña", "contrasena", "passwort", "kennwort",
    "mot_de_passe", "senha", "wachtwoord", "haslo", "lösenord", "salasana", "пароль", "密码", "パスワード",
    "private_key_id", "encryption_key", "signing_key", "master_key", "webhook_secret", "jwt_secret", "smtp_password",
    "ldap_bind_password", "redis_password", "AWS_SECRET_ACCESS_KEY", "AZURE_CLIENT_SECRET", "GITHUB_TOKEN",
    "NPM_TOKEN", "SLACK_BOT_TOKEN", "credentials", "connection_string", "passphrase", "wpa_passphrase", "psk",
]
SUFFIXES = ["api_key", "token", "secret", "access_token", "client_secret", "api_token", "secret_key", "auth_token", "key"]


def password(g: Gen) -> str:
    """A human-ish password with the characters that broke the old redactor (: = ; & , @ /)."""
    return g.s(ALNUM, 6) + g.rng.choice(":=;&,@/!#%^*") + g.s(ALNUM, 3) + g.rng.choice(":=;&,@/") + g.s(ALNUM + "-_", 4)


def secrets(seed: int = 15) -> list[Secret]:
    """Every shape once, with fresh values."""
    g = Gen(seed)
    out = [Secret(f"gitleaks:{rule}" if ":" not in rule else rule, None, make(g)) for rule, make in PREFIXED]
    out += [Secret(f"gitleaks:{rule}", f"{vendor}_{g.rng.choice(SUFFIXES)}", make(g)) for rule, vendor, make in KEYWORD_RULES]
    out += [Secret(f"detect-secrets:keyword:{key}", key, password(g)) for key in SECRET_KEYS]
    return out


# --- the secrets placed in files of each format ------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    shape: str
    fmt: str
    text: str  # one or more lines, as they stand in a file of that format
    canaries: tuple[str, ...]  # what must never be shown (any 12-character stretch of it)


NEUTRAL = "note"  # a key that names nothing secret: a bare token must be found by its shape


def _line(fmt: str, key: str | None, value: str, i: int) -> str:
    k = key or NEUTRAL
    upper = k.upper().replace("-", "_")
    if fmt == "log":
        return f"2026-12-01T10:{i % 60:02d}:{i * 7 % 60:02d}Z app[{1000 + i}]: INFO loaded {k}={value} for tenant acme"
    if fmt == "env":
        return f"{upper}={value}" if i % 2 else f'export {upper}="{value}"'
    if fmt == "yaml":
        return f'  {k}: "{value}"' if i % 2 else f"  {k}: {value}"
    if fmt == "json":
        return f'  "{k}": "{value}",'
    if fmt == "ini":
        return f"{k} = {value}"
    if fmt == "xml":
        return f'  <add key="{k}" value="{value}" />' if i % 2 else f"  <{k}>{value}</{k}>"
    if fmt == "php":
        return f"define('{upper}', '{value}');" if i % 2 else f"$config['{k}'] = '{value}';"
    if fmt == "history":
        if key is None:
            return f"echo {value} | tee /tmp/out.txt"
        return f"export {upper}='{value}'" if i % 2 else f"deploy --{k}={value} --region eu-west-1"
    if fmt == "url":
        if key is None:
            return f"GET https://api.example.com/v1/items?code={value}&page=2 HTTP/1.1"
        return f"POST https://hooks.example.com/notify?{k}={value} 204"
    if fmt == "cmdline":
        if key is None:
            return f"/usr/bin/uploader --verbose {value}"
        return f"/usr/bin/app --{k} {value} --port 8080" if i % 2 else f"/usr/bin/app --{k}={value}"
    raise ValueError(fmt)


LINE_FORMATS = ("log", "env", "yaml", "json", "ini", "xml", "php", "history", "url", "cmdline")


def _pem(g: Gen, name: str, lines: int = 12, width: int = 64) -> tuple[str, tuple[str, ...]]:
    body = [g.s(B64, width) for _ in range(lines)] + [g.s(B64, 20) + "=="]
    return "\n".join([f"-----BEGIN {name}-----", *body, f"-----END {name}-----"]), tuple(body)


def _special(g: Gen) -> list[Entry]:
    """Shapes that belong to one format (issue 15's list, key blocks, multi-line values)."""
    out: list[Entry] = []

    def add(shape: str, fmt: str, text: str, *canaries: str) -> None:
        out.append(Entry(shape, fmt, text, canaries))

    pw = [password(g) for _ in range(40)]
    add("curl-auth-user", "history", f"curl -u admin:{pw[0]} https://api.example.com/v1/me", pw[0])
    add("curl-auth-user-long", "history", f"curl -s --user deploy:{pw[1]} https://api.example.com", pw[1])
    tok = g.s(ALNUM, 40)
    add("curl-auth-header", "history", f'curl -H "Authorization: Bearer {tok}" https://api.example.com', tok)
    add("php-define-db-password", "php", f"define('DB_PASSWORD', '{pw[2]}');", pw[2])
    add("xml-password-tag", "xml", f"  <password>{pw[3]}</password>", pw[3])
    add("nuget-config-password", "xml", f'  <add key="ClearTextPassword" value="{pw[4]}" />', pw[4])
    add("xml-property-password", "xml", f'  <property name="hibernate.connection.password" value="{pw[5]}"/>', pw[5])
    add("redis-requirepass", "ini", f"requirepass {pw[6]}", pw[6])
    add("redis-masterauth", "ini", f"masterauth {pw[7]}", pw[7])
    add("ldap-bindpw", "ini", f"bindpw {pw[8]}", pw[8])
    add("ldap-bindpw-upper", "ini", f"BINDPW {pw[9]}", pw[9])
    add("wpa-psk", "ini", f'  psk="{pw[10]}"', pw[10])
    add("netrc", "ini", f"machine api.example.com login deploy password {pw[11]}", pw[11])
    add("keepalived-auth-pass", "ini", f"    auth_pass {pw[12]}", pw[12])
    add("contrasena-es", "ini", f"contraseña={pw[13]}", pw[13])
    half1, half2 = g.s(B64, 20), g.s(B64, 20)
    add("split-quoted-two-lines", "env", f'DB_PASSWORD="{half1}\n{half2}"', half1, half2)
    add("split-wrapped-value", "ini", f"aws_secret_access_key = {half2}\n  {half1}", half1, half2)
    a, b = g.s(ALNUM, 16), g.s(ALNUM, 16)
    add("split-backslash", "history", f"export API_TOKEN={a}\\\n{b}", a, b)
    add("yaml-block-scalar", "yaml", f"password: |\n  {a}\n  {b}\nuser: app", a, b)
    add("json-value-next-line", "json", f'  "client_secret":\n    "{b}{a}",', b + a)
    add("log-authorization-header", "log", f"2026-12-01 10:00:00 proxy: Authorization: Basic {base64.b64encode(f'bob:{a}'.encode()).decode()}",
        base64.b64encode(f"bob:{a}".encode()).decode())
    add("log-cookie-header", "log", f"2026-12-01 10:00:01 proxy: Cookie: sessionid={tok[:32]}; csrftoken={tok[8:]}", tok[:32], tok[8:])
    add("mysql-p-glued", "cmdline", f"mysql -u root -p{pw[14]} shop", pw[14])
    add("sshpass", "cmdline", f"sshpass -p {pw[15]} ssh admin@10.0.0.5", pw[15])
    add("redis-cli-a", "cmdline", f"redis-cli -h cache -a {pw[16]} ping", pw[16])
    add("openssl-passin", "cmdline", f"openssl rsa -in key.pem -passin pass:{pw[17]}", pw[17])
    add("htpasswd-b", "history", f"htpasswd -b /etc/nginx/.users bob {pw[18]}", pw[18])
    add("smbclient-user-percent", "history", f"smbclient //nas/share -U bob%{pw[19]}", pw[19])
    add("option-space-password", "cmdline", f"backup --password {pw[20]} --verbose", pw[20])
    add("option-equals-token", "log", f"2026-12-01 10:00:02 runner: exec worker --token={tok} --api_key={a}", tok, a)
    add("url-password-at-slash", "url", f"DATABASE_URL=postgres://app:{pw[21]}@db.internal:5432/prod", pw[21])
    add("url-password-in-log", "log", f"2026-12-01 10:00:03 app: connecting to amqp://svc:{pw[22]}@mq.internal:5672/vhost", pw[22])
    add("git-credential-url", "history", f"git clone https://x-access-token:{tok}@github.com/acme/app.git", tok)
    add("connection-string", "ini", f"ConnectionString=Server=db;User Id=sa;Password={pw[23]};Encrypt=true", pw[23])
    add("gcp-private-key-id", "json", f'  "private_key_id": "{g.s(HEX, 40)}",', out[-1].canaries[0] if False else "")
    out[-1] = Entry("gcp-private-key-id", "json", out[-1].text, (out[-1].text.split('"')[3],))
    pem, body = _pem(g, "PRIVATE KEY", 4)
    add("gcp-service-account-private-key", "json", '  "private_key": "' + pem.replace("\n", "\\n") + '\\n",', *body)
    for name in ("RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "DSA PRIVATE KEY",
                 "PGP PRIVATE KEY BLOCK"):
        text, body = _pem(g, name)
        add(f"key-block:{name.lower().replace(' ', '-')}", "keys", text, *body)
    ssh2 = [g.s(B64, 70) for _ in range(8)]
    add("key-block:ssh2-encrypted", "keys", "\n".join(["---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----",
                                                       'Comment: "rsa-key-20261201"', *ssh2,
                                                       "---- END SSH2 ENCRYPTED PRIVATE KEY ----"]), *ssh2)
    putty = [g.s(B64, 64) for _ in range(6)]
    add("key-block:putty", "keys", "\n".join(["PuTTY-User-Key-File-3: ssh-ed25519", "Encryption: none",
                                              "Comment: ed25519-key", "Public-Lines: 2", "AAAAC3NzaC1lZDI1NTE5AAAAI",
                                              "Private-Lines: 6", *putty, f"Private-MAC: {g.s(HEX, 64)}"]), *putty)
    data = base64.b64encode(pw[24].encode()).decode()
    add("kubernetes-secret-yaml", "yaml", f"kind: Secret\ndata:\n  db-password: {data}\n  tls.key: {g.s(B64, 64)}", data)
    auth = base64.b64encode(f"robot:{pw[25]}".encode()).decode()
    add("docker-config-auth", "json", f'  "auths": {{"registry.example.com": {{"auth": "{auth}"}}}},', auth)
    return out


def entries(seed: int = 15) -> list[Entry]:
    """Every line shape in every line format, then the format-specific shapes."""
    out = []
    for i, secret in enumerate(secrets(seed)):
        for fmt in LINE_FORMATS:
            canary = secret.value.removeprefix("https://")  # "https://hook" is in ordinary URLs too
            out.append(Entry(secret.shape, fmt, _line(fmt, secret.key, secret.value, i), (canary,)))
    return out + _special(Gen(seed + 1))


# --- ordinary log lines: what the redactor must leave readable ----------------------------------------

def ordinary_lines(n: int = 10_000, seed: int = 7) -> list[str]:
    """Log lines of the kinds a troubleshooting session reads (syslog, kernel, sshd, systemd, nginx,
    postgres, docker, Kubernetes, Java and Python traces, package managers, git), full of paths,
    hashes (sha256, git SHAs, ssh fingerprints, package integrity), UUIDs, versions, times and
    addresses: none of them a secret."""
    g = Gen(seed)
    r = g.rng
    words = ["worker", "cache", "queue", "billing", "auth", "session", "api", "sync", "backup", "indexer", "mailer"]
    paths = ["/var/lib/docker/overlay2/{h}/merged", "/usr/lib/x86_64-linux-gnu/libssl.so.3", "/home/{u}/projects/{w}/src/main.py",
             "/etc/nginx/sites-enabled/{w}.conf", "/var/log/{w}/{w}.log", "/opt/{w}/releases/{v}/bin/{w}",
             "/usr/share/doc/python3-{w}/README.Debian", "C:\\Program Files\\{W}\\{W}.exe", "src/{w}/handlers/{W}Handler.java"]

    def ip() -> str:
        return f"{r.choice([10, 172, 192, 203])}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}"

    def stamp() -> str:
        return f"2026-12-01T{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}.{r.randint(0, 999):03d}Z"

    def fill(template: str) -> str:
        w = r.choice(words)
        return template.format(
            h=g.s(HEX, 64), sha1=g.s(HEX, 40), short=g.s(HEX, 7), uuid=g.uuid(), ip=ip(), ip2=ip(), port=r.randint(1024, 65535),
            pid=r.randint(2, 99999), v=f"{r.randint(0, 9)}.{r.randint(0, 30)}.{r.randint(0, 99)}", t=stamp(), w=w,
            W=w.capitalize(), u=r.choice(["alice", "bob", "deploy", "www-data"]), ms=r.randint(1, 9999),
            n=r.randint(0, 10 ** 6), path=r.choice(paths).format(h=g.s(HEX, 64), u="bob", w=w, W=w.capitalize(),
                                                                 v=f"{r.randint(1, 9)}.{r.randint(0, 9)}"),
            fp=g.s(B64, 43), integ=g.s(B64, 86) + "==", pod=f"{w}-{g.s(LOWNUM, 10)}-{g.s(LOWNUM, 5)}",
            mac=":".join(g.s(HEX, 2) for _ in range(6)), ipv6=":".join(g.s(HEX, 4) for _ in range(8)),
        )

    templates = [
        "{t} host {w}[{pid}]: INFO request id={uuid} path=/api/v1/{w}/{n} status=200 took {ms}ms",
        "{t} host kernel: [{n}.{ms}] EXT4-fs (sda1): mounted filesystem {uuid} r/w with ordered data mode",
        "{t} host sshd[{pid}]: Accepted publickey for {u} from {ip} port {port} ssh2: ED25519 SHA256:{fp}",
        "{t} host sshd[{pid}]: Failed password for invalid user admin from {ip} port {port} ssh2",
        "{t} host systemd[1]: Started {W} service ({path}) with main PID {pid}.",
        "{ip} - - [01/Dec/2026:10:{ms:0>4}] \"GET /static/{w}.{short}.js HTTP/1.1\" 200 {n} \"-\" \"Mozilla/5.0 (X11; Linux x86_64)\"",
        "{t} postgres[{pid}]: LOG:  checkpoint complete: wrote {n} buffers; sync files={ms}, longest={ms}.123 s",
        "{t} postgres[{pid}]: FATAL:  password authentication failed for user \"{u}\"",
        "{t} dockerd[{pid}]: level=info msg=\"pulling image\" image=registry.example.com/{w}:{v} digest=sha256:{h}",
        "{t} kubelet[{pid}]: I1201 pod=\"default/{pod}\" container={w} containerID=containerd://{h} status=Running",
        "{t} {w}: git checkout {sha1} (HEAD -> main, tag: v{v}) merged #{n} {short}",
        "  at com.example.{w}.{W}Service.handle({W}Service.java:{ms}) ~[{w}-{v}.jar:{v}]",
        "  File \"{path}\", line {ms}, in {w}_handler",
        "{t} npm[{pid}]: added {w}@{v} integrity sha512-{integ} resolved https://registry.npmjs.org/{w}/-/{w}-{v}.tgz",
        "{t} pip[{pid}]: Successfully installed {w}-{v} (sha256={h})",
        "{t} host dhclient[{pid}]: DHCPACK of {ip} from {ip2} (xid=0x{short}) on eth0 {mac}",
        "{t} host NetworkManager[{pid}]: <info> device (wlan0): address {ipv6} added, lifetime {n}s",
        "{t} host CRON[{pid}]: ({u}) CMD (/usr/local/bin/{w}-rotate --keep 7 {path})",
        "{t} {w}[{pid}]: WARN cache miss ratio {ms}/{n} for key prefix {w}:{n} (session store ok)",
        "{t} {w}[{pid}]: ERROR upstream {ip}:{port} timed out after {ms} ms (attempt 3/5), trace_id={short}{short}",
        "{t} apt[{pid}]: Unpacking lib{w}3:amd64 ({v}-1ubuntu0.{n}) over ({v}-1) sha1 {sha1}",
        "{t} host auditd[{pid}]: type=USER_AUTH msg=audit({n}.{ms}:{pid}): pid={pid} uid=0 auid={ms} res=success",
        "{t} {w}[{pid}]: DEBUG token bucket refilled: {n} tokens, rate={ms}/s, password policy min_length=12",
        "{t} {w}[{pid}]: INFO loaded config {path} (mtime {t}, {n} bytes, checksum md5:{short}{short}{short}{short})",
    ]
    return [fill(r.choice(templates)) for _ in range(n)]
