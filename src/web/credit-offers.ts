// How an account gets more credits. This self-hosted version has no payment provider: an operator
// grants credits or records a purchase with the CLI. A provider plugs in by implementing
// CreditOffer (a checkout link or form per account) and being passed in WebContext.
import type { Account } from '../store/accounts-repository.ts';
import { html, type SafeHtml } from './html.ts';

export interface CreditOffer {
  /** The "how to get credits" section of the credits page for this account. */
  render(account: Account): SafeHtml;
}

export const operatorCreditOffer: CreditOffer = {
  render(account) {
    return html`<p>This service is self-hosted: there is no online payment yet. Ask the operator to add credits to
      your account <code>${account.id}</code>. They run one of these on the server:</p>
      <pre><code># a recorded purchase, which also unlocks API access
npx cutout credits grant --account ${account.id} --amount 100 --purchase
# a free grant
npx cutout credits grant --account ${account.id} --amount 10</code></pre>`;
  },
};
