// dist/zod.cjs: zod alone, for the config commands' bundle (see src/ui/config-fast.ts).
export { z } from 'zod';
