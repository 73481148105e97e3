import { Box, Text } from 'ink';
import type { TrustOffer } from '../../../main/protocol.ts';
import { SelectDialog } from './SelectDialog.tsx';

interface TrustDialogProps {
  offer: TrustOffer;
  onAnswer: (trust: boolean) => void;
}

/**
 * A repository whose config starts processes, widens what tools may do, or has prompt files for
 * the model: show what, offer to trust it (as `niffler trust` does).
 */
export const TrustDialog = ({ offer, onAnswer }: TrustDialogProps) => (
  <SelectDialog
    title={
      offer.level === 'changed'
        ? "This repository's config changed since you trusted it. Trust it as it is now?"
        : 'Trust this repository?'
    }
    choices={[
      {
        label: 'Trust it: start its servers, use its settings and prompt files',
        key: 'y',
        value: true,
      },
      { label: 'Not now (none of it is used)', key: 'n', value: false },
    ]}
    onSelect={onAnswer}
    escape={false}
  >
    <Box flexDirection="column">
      {offer.servers.map((server) => (
        <Text key={server.name}>
          server <Text bold>{server.name}</Text>: {server.command}
        </Text>
      ))}
      {offer.settings.map((setting) => (
        <Text key={setting}>setting {setting}</Text>
      ))}
      {offer.prompts.length ? (
        <Text>prompt files for the model: {offer.prompts.join(', ')}</Text>
      ) : null}
      <Text dimColor>
        Same as niffler trust; any change to these asks again (niffler trust --diff).
      </Text>
    </Box>
  </SelectDialog>
);
